import { z } from 'zod';
import {
  createWebhookSchema,
  deliveryOut,
  listDeliveriesQuerySchema,
  redeliveryOut,
  testResultOut,
  updateWebhookSchema,
  webhookOut,
} from '../webhooks/index.ts';
import { memberHandler } from './org-route.ts';

/** Webhook subscriptions and their delivery records (contract, "Webhook (management)"). */

export const listWebhooks = memberHandler(
  { summary: 'Webhooks (no secrets)', response: z.array(webhookOut) },
  ({ params }, app) => app.webhooks.list(params.project_id!),
);

export const createWebhook = memberHandler(
  {
    summary: 'Subscribe an HTTPS URL to events (the secret is shown once)',
    body: createWebhookSchema,
    response: webhookOut,
  },
  ({ params, body, actor }, app) => app.webhooks.create(params.project_id!, body, actor),
);

export const getWebhook = memberHandler({ summary: 'A webhook (no secret)', response: webhookOut }, ({ params }, app) =>
  app.webhooks.get(params.project_id!, params.webhook_id!),
);

export const updateWebhook = memberHandler(
  { summary: 'Change url, events or is_active (true reactivates)', body: updateWebhookSchema, response: webhookOut },
  ({ params, body, actor }, app) => app.webhooks.update(params.project_id!, params.webhook_id!, body, actor),
);

export const deleteWebhook = memberHandler({ summary: 'Delete a webhook' }, ({ params, actor }, app) =>
  app.webhooks.remove(params.project_id!, params.webhook_id!, actor),
);

export const rotateWebhookSecret = memberHandler(
  {
    summary: 'A new secret; the old one is invalid at once',
    response: z.object({ secret: z.string() }),
    status: 200,
  },
  ({ params, actor }, app) => app.webhooks.rotateSecret(params.project_id!, params.webhook_id!, actor),
);

export const testWebhook = memberHandler(
  { summary: 'Send a signed test.ping now', response: testResultOut, status: 200 },
  ({ params }, app) => app.webhooks.test(params.project_id!, params.webhook_id!),
);

export const listWebhookDeliveries = memberHandler(
  { summary: 'Attempt records, newest first', query: listDeliveriesQuerySchema, response: z.array(deliveryOut) },
  ({ params, query }, app) => app.webhooks.deliveries(params.project_id!, params.webhook_id!, query),
);

export const getWebhookDelivery = memberHandler(
  { summary: 'One attempt: the payload sent and the response', response: deliveryOut },
  ({ params }, app) => app.webhooks.delivery(params.project_id!, params.webhook_id!, params.delivery_id!),
);

export const redeliverWebhook = memberHandler(
  { summary: 'Queue a new attempt of that event (10 a minute per webhook)', response: redeliveryOut, status: 202 },
  ({ params, actor }, app) =>
    app.webhooks.redeliver(params.project_id!, params.webhook_id!, params.delivery_id!, actor),
);
