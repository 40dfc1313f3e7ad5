import { z } from 'zod';
import type { App } from '../app.ts';
import {
  createWebhookSchema,
  deliveryOut,
  listDeliveriesQuerySchema,
  redeliveryOut,
  testResultOut,
  updateWebhookSchema,
  webhookOut,
} from '../webhooks/index.ts';
import { PROJECT, type OrgRoute } from './org-route.ts';

const W = `${PROJECT}/webhooks`;
const ONE = `${W}/:webhook_id`;

/** Webhook subscriptions and their delivery records (contract, "Webhook (management)"). */
export function registerWebhookRoutes(orgRoute: OrgRoute, app: App): void {
  const pid = (p: Record<string, string>) => p.project_id!;
  orgRoute('GET', W, { summary: 'Webhooks (no secrets)', response: z.array(webhookOut) }, ({ params }) =>
    app.webhooks.list(pid(params)),
  );
  orgRoute(
    'POST',
    W,
    {
      summary: 'Subscribe an HTTPS URL to events (the secret is shown once)',
      body: createWebhookSchema,
      response: webhookOut,
    },
    ({ params, body, actor }) => app.webhooks.create(pid(params), body, actor),
  );
  orgRoute('GET', ONE, { summary: 'A webhook (no secret)', response: webhookOut }, ({ params }) =>
    app.webhooks.get(pid(params), params.webhook_id!),
  );
  orgRoute(
    'PATCH',
    ONE,
    { summary: 'Change url, events or is_active (true reactivates)', body: updateWebhookSchema, response: webhookOut },
    ({ params, body, actor }) => app.webhooks.update(pid(params), params.webhook_id!, body, actor),
  );
  orgRoute('DELETE', ONE, { summary: 'Delete a webhook' }, ({ params, actor }) =>
    app.webhooks.remove(pid(params), params.webhook_id!, actor),
  );
  orgRoute(
    'POST',
    `${ONE}/rotate-secret`,
    {
      summary: 'A new secret; the old one is invalid at once',
      response: z.object({ secret: z.string() }),
      status: 200,
    },
    ({ params, actor }) => app.webhooks.rotateSecret(pid(params), params.webhook_id!, actor),
  );
  orgRoute(
    'POST',
    `${ONE}/test`,
    { summary: 'Send a signed test.ping now', response: testResultOut, status: 200 },
    ({ params }) => app.webhooks.test(pid(params), params.webhook_id!),
  );
  orgRoute(
    'GET',
    `${ONE}/deliveries`,
    { summary: 'Attempt records, newest first', query: listDeliveriesQuerySchema, response: z.array(deliveryOut) },
    ({ params, query }) => app.webhooks.deliveries(pid(params), params.webhook_id!, query),
  );
  orgRoute(
    'GET',
    `${ONE}/deliveries/:delivery_id`,
    { summary: 'One attempt: the payload sent and the response', response: deliveryOut },
    ({ params }) => app.webhooks.delivery(pid(params), params.webhook_id!, params.delivery_id!),
  );
  orgRoute(
    'POST',
    `${ONE}/deliveries/:delivery_id/redeliver`,
    { summary: 'Queue a new attempt of that event (10 a minute per webhook)', response: redeliveryOut, status: 202 },
    ({ params, actor }) => app.webhooks.redeliver(pid(params), params.webhook_id!, params.delivery_id!, actor),
  );
}
