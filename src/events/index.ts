// The email event vocabulary, once: every type an email's timeline records, which of them a
// webhook may subscribe to, and which the hourly stats rollup counts. emails/, webhooks/ and
// stats/ take their lists from here, and both dialects' triggers on email_events (the
// webhook outbox and the stats rollup) name the same sets: test/contract/event-triggers.test.ts reads
// the triggers of a migrated database of each dialect and holds them to these lists, so a
// type added here without a migration of both triggers fails there. (Each list keeps the
// order the API has always shown it in.)

/** Every event type, in the order of an email's life. */
export const EVENT_TYPES = [
  'queued',
  'sending',
  'sent',
  'delivered',
  'smtp_connected',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'failed',
  'simulated',
  // A recipient's one-click or mailto unsubscribe (RFC 8058, RFC 2369; decisions.md): a webhook event, not a stat.
  'unsubscribed',
  // A scheduled email cancelled before it started (decisions.md, "Scheduled sending").
  'canceled',
  // A recipient deferred for the first time, then past 1 h, 4 h and 24 h (decisions.md, "delivery_delayed").
  'delivery_delayed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The names a webhook may subscribe to (decisions.md: the specification's, plus simulated, opened and unsubscribed); `*` is every one. */
export const WEBHOOK_EVENTS = [
  'queued',
  'sending',
  'sent',
  'delivered',
  'clicked',
  'bounced',
  'complained',
  'failed',
  'simulated',
  'opened',
  'unsubscribed',
  'canceled',
  'delivery_delayed',
] as const satisfies readonly EventType[];
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * Events of a project's resources rather than of an email (issue 35; decisions.md, "Domain and
 * suppression events"): a domain's verification changing, an address joining or leaving the
 * suppression list. A webhook names them to get them: `*` keeps the contract's meaning, every
 * email event, so a contract client subscribed to `*` sees no body it does not know.
 */
export const RESOURCE_EVENTS = ['domain.verification_changed', 'suppression.added', 'suppression.removed'] as const;
export type ResourceEvent = (typeof RESOURCE_EVENTS)[number];

/** The types the hourly rollup counts: queued and simulated once per email, the others per recipient, open or click. */
export const STAT_TYPES = [
  'queued',
  'simulated',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'failed',
  'opened',
  'clicked',
] as const satisfies readonly EventType[];
export type StatType = (typeof STAT_TYPES)[number];

export {
  notice,
  noticeBody,
  createNoticeWriter,
  createPgNoticeWriter,
  type Notice,
  type NoticeWriter,
  type PgNoticeWriter,
  type Subscriber,
} from './notices.ts';
