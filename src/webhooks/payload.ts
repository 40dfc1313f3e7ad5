// The body of a webhook event: one function for both stores, since it is what the signature
// covers (issue 30, item 3: "the webhook payload (built in TypeScript for both, so the signed
// bytes are one function)").
import type { DueRow, LeasedDueRow } from './store.ts';

/** What the body of an outbox row is made of, as both stores read it with the row. */
export interface PayloadParts {
  payload: string | null;
  email_id: string | null;
  from_email: string;
  to_emails: string;
  subject: string;
  tags: string;
  /** The email's metadata (JSON text), null without: then the body is the contract's, key for key. */
  metadata: string | null;
  email_status: string | null;
  ev_id: string | null;
  ev_type: string;
  ev_created_at: string;
  ev_data: string;
  ip_address: string | null;
  user_agent: string | null;
}

/**
 * The contract's "Webhooks (push)" body: keys in this order, compact, the event's data as
 * stored, and a click's `ip` and `user_agent` set last; `payload` when the row carries its own
 * (a retry sends the bytes of its first attempt, a redelivery its stored body). Null when the
 * event's email is gone. Built in TypeScript rather than in SQL: PostgreSQL's JSON functions
 * would space and (jsonb) reorder it.
 */
export function buildPayload(p: PayloadParts): string | null {
  if (p.payload !== null) return p.payload;
  if (p.email_id === null || p.ev_id === null) return null;
  const data = JSON.parse(p.ev_data) as Record<string, unknown>;
  if (p.ev_type === 'clicked') Object.assign(data, { ip: p.ip_address, user_agent: p.user_agent });
  return JSON.stringify({
    id: `evt_${p.ev_id}`,
    type: `email.${p.ev_type}`,
    created_at: `${p.ev_created_at.slice(0, 23)}000Z`,
    data: {
      email: {
        id: p.email_id,
        from: p.from_email,
        to: JSON.parse(p.to_emails) as unknown,
        subject: p.subject,
        tags: JSON.parse(p.tags) as unknown,
        status: p.email_status,
        ...(p.metadata ? { metadata: JSON.parse(p.metadata) as unknown } : {}),
      },
      event: data,
    },
  });
}

/** The columns both stores' claims read: the outbox row, its webhook, and its body's parts. */
export type DueParts = Omit<DueRow, 'payload'> & PayloadParts;

/** A claimed row as the dispatcher takes it: its body built, its lease (empty on SQLite). */
export function dueRowOf(r: DueParts, lease: string): LeasedDueRow {
  return {
    seq: r.seq,
    id: r.id,
    webhook_id: r.webhook_id,
    event_id: r.event_id,
    event_type: r.event_type,
    attempts: r.attempts,
    next_attempt_at: r.next_attempt_at,
    created_at: r.created_at,
    skip: r.skip,
    url: r.url,
    secret: r.secret,
    is_active: r.is_active,
    payload: buildPayload(r),
    lease,
  };
}
