export { createWebhooksRepo, type WebhooksRepo } from './repo.ts';
export { createWebhooksService, type WebhooksService } from './service.ts';
export { createWebhookDispatcher, type WebhookDispatcher, type DispatcherStats } from './dispatcher.ts';
export { createWebhookAgent, resolverFromDns } from './url-guard.ts';
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
