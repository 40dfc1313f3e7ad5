import { z } from 'zod';
import { RESOURCE_EVENTS, WEBHOOK_EVENTS } from '../events/index.ts';

export { RESOURCE_EVENTS, WEBHOOK_EVENTS, type WebhookEvent } from '../events/index.ts';

const events = z
  .array(z.enum([...WEBHOOK_EVENTS, ...RESOURCE_EVENTS, '*']))
  .min(1)
  .max(20)
  .transform((list) => [...new Set(list)]);

/** POST …/webhooks (contract: `url` HTTPS, `events` 1 to 20 names). */
export const createWebhookSchema = z.strictObject({
  url: z.string().max(2048),
  events,
});

/** PATCH …/webhooks/{id}: only supplied fields change. */
export const updateWebhookSchema = z
  .strictObject({ url: z.string().max(2048), events, is_active: z.boolean() })
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: 'give url, events or is_active' });

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;

/** GET …/deliveries (contract: `status`, `from`, `to`, `limit`, `offset`). */
export const listDeliveriesQuerySchema = z.strictObject({
  status: z.enum(DELIVERY_STATUSES).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(25),
  offset: z.coerce.number().int().min(0).max(100_000).default(0),
});

export const webhookOut = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  url: z.string(),
  events: z.array(z.string()),
  is_active: z.boolean(),
  auto_disabled: z.boolean(),
  created_at: z.iso.datetime({ offset: true }),
  updated_at: z.iso.datetime({ offset: true }),
  /** Only in the answers to creation and rotation. */
  secret: z.string().optional(),
});
export type Webhook = z.infer<typeof webhookOut>;

export const deliveryOut = z.object({
  id: z.uuid(),
  webhook_id: z.uuid(),
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number().int(),
  status: z.enum(DELIVERY_STATUSES),
  http_status: z.number().int().nullable(),
  duration_ms: z.number().int().nullable(),
  error: z.string().nullable(),
  request_body: z.string(),
  response_body: z.string().nullable(),
  created_at: z.iso.datetime({ offset: true }),
  next_attempt_at: z.iso.datetime({ offset: true }).nullable(),
});
export type Delivery = z.infer<typeof deliveryOut>;

export const testResultOut = z.object({
  success: z.boolean(),
  /** The contract's integer: 0 when no HTTP answer came (refused, unreachable, timed out). */
  http_status: z.number().int(),
  error: z.string().nullable(),
});
export type TestResult = z.infer<typeof testResultOut>;

/** A manual redelivery queued (202): the new attempt waiting in the outbox. */
export const redeliveryOut = z.object({
  id: z.uuid(),
  status: z.literal('pending'),
  event_id: z.string(),
  next_attempt_at: z.iso.datetime({ offset: true }),
});
