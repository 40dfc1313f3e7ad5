export { createWebhooksRepo } from './repo.ts';
export type * from './store.ts';
export { createWebhooksService, type WebhooksService } from './service.ts';
export { createWebhookDispatcher, type WebhookDispatcher, type DispatcherStats } from './dispatcher.ts';
// The agent (createWebhookAgent) is url-guard.ts's, which loads undici: the composition root imports it when needed.
export { resolverFromDns } from './url-check.ts';
export { sign } from './send.ts';
export {
  WEBHOOK_EVENTS,
  createWebhookSchema,
  updateWebhookSchema,
  listDeliveriesQuerySchema,
  webhookOut,
  deliveryOut,
  testResultOut,
  redeliveryOut,
  type Webhook,
  type Delivery,
} from './schema.ts';
