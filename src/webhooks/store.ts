// The webhooks store: what webhooks ask of a database, whichever runs. repo.ts (SQLite) and
// repo-pg.ts (PostgreSQL) implement it; test/contract/webhooks.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { Delivery } from './schema.ts';

export interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  /** JSON array. */
  events: string;
  secret: string;
  is_active: number;
  auto_disabled: number;
  exhausted_in_a_row: number;
  created_at: string;
  updated_at: string;
}

/** An event still to deliver to a webhook, as the dispatcher claims it. */
export interface OutboxRow {
  seq: number;
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  next_attempt_at: string;
  created_at: string;
}

/** A claimed outbox row with what its attempt needs of its webhook, read in the same query. */
export interface DueRow extends Omit<OutboxRow, 'payload'> {
  /** The body to send; null when the event's email no longer exists. */
  payload: string | null;
  /** 1 when the webhook was inactive as the event happened. */
  skip: number;
  url: string;
  secret: string;
  is_active: number;
}

/**
 * A claimed outbox row with the token of its claim: on PostgreSQL the due time its claim
 * wrote, which its writes name; empty on SQLite, whose one dispatcher leases nothing.
 */
export type LeasedDueRow = DueRow & { lease: string };

/** What one attempt changed: its record, and the outbox row's fate. */
export interface AttemptResult {
  record: Omit<Delivery, 'status'> & { status: 'succeeded' | 'failed' };
  /** The next attempt's time, or null when the event is done (delivered, or out of attempts). */
  next: string | null;
  /** True when this attempt used the last one without delivery. */
  exhausted: boolean;
  /** Exhausted events in a row that deactivate the webhook. */
  disableAfter: number;
}

/** A webhook's delivery record (an attempt, or a skipped event), as stored and listed. */
export type DeliveryRow = Omit<Delivery, never>;

/** A retention batch's outcome: rows deleted, where the next batch starts, whether it is over. */
export interface RetentionBatch {
  changed: number;
  next: number;
  done: boolean;
}

export interface WebhooksStore {
  /**
   * One batch of retention (`--email-retention`): deletes the attempt records written before
   * `cutoff`, in seq order from after `afterSeq`, at most `limit`; `next` is the seq the next
   * batch starts after, `done` once a newer record is reached or there are no more.
   */
  deleteDeliveriesBefore(cutoff: string, afterSeq: number, limit: number): Promise<RetentionBatch>;
  /** The webhook, or undefined when absent. */
  findById(id: string): Promise<WebhookRow | undefined>;
  /** The project's webhooks, in creation order. */
  listOfProject(projectId: string): Promise<WebhookRow[]>;
  /**
   * Inserts the webhook and its audit row in one transaction, unless the organization already
   * has `max` webhooks (counted inside the write, so the ceiling holds under concurrent
   * creates); false, and nothing written, at the ceiling. `max` null: no ceiling.
   */
  create(row: WebhookRow, max: number | null, a: Audited): Promise<boolean>;
  /** Writes every mutable field of the webhook and its audit row, in one transaction. */
  update(row: WebhookRow, a: Audited): Promise<void>;
  /** Deletes the webhook (its outbox rows go with it) and writes the audit row; false, nothing written, when absent. */
  remove(id: string, a: Audited): Promise<boolean>;
  /**
   * Due outbox rows (next_attempt_at <= now), oldest due first, at most `limit`, each with its webhook's url, secret and state and its body (built from the
   * event when the row carries none; null when the event's email is gone). On PostgreSQL the
   * claim leases the rows for `leaseMs` (their `lease` names the claim, and another claim does
   * not take them meanwhile, and a write naming a lease that ran out and was retaken writes
   * nothing); on SQLite, whose one dispatcher keeps its rows in flight in memory and passes
   * their seqs as `skip`, the claim writes nothing and the lease is empty (PostgreSQL's leases
   * already keep rows in flight out, so it ignores `skip`).
   */
  claimDue(now: string, limit: number, leaseMs: number, skip?: Set<number>): Promise<LeasedDueRow[]>;
  /**
   * Stores an attempt's record and moves the outbox row on (a retry due at `r.next` carrying
   * the attempt's body, or gone when done), in one transaction; an exhausted event counts
   * toward deactivation (the webhook deactivated, auto_disabled, at `r.disableAfter` in a row),
   * a success resets the count. Returns whether the webhook is still active.
   */
  recordAttempt(outboxSeq: number, lease: string, r: AttemptResult): Promise<boolean>;
  /** Deletes an outbox row whose event is gone (its email was deleted): nothing to send. */
  drop(outboxSeq: number, lease: string): Promise<void>;
  /** A skipped event (the webhook was deactivated after it was queued): the record written and the outbox row deleted, together. */
  recordSkipped(outboxSeq: number, lease: string, record: DeliveryRow): Promise<void>;
  /** A manual redelivery: a new outbox row with the given event and body, and its audit row, in one transaction. */
  enqueue(row: Omit<OutboxRow, 'seq' | 'attempts'>, a: Audited): Promise<void>;
  /** The webhook's delivery record, or undefined when absent or another webhook's. */
  findDelivery(webhookId: string, id: string): Promise<DeliveryRow | undefined>;
  /** The webhook's delivery records, newest first, filtered by status and created_at bounds (inclusive). */
  listDeliveries(
    webhookId: string,
    f: { status?: string | undefined; from?: string | undefined; to?: string | undefined },
    limit: number,
    offset: number,
  ): Promise<DeliveryRow[]>;
  /** When the longest-waiting due event fell due (undefined when none is due at `now`). */
  oldestDue(now: string): Promise<string | undefined>;
  /** Events waiting in the outbox, due or not (for `svc top` and /metrics). */
  pendingCount(): Promise<number>;
  /** Whether any webhook exists (the dispatcher thread starts with the first). */
  anyWebhook(): Promise<boolean>;
  /** Webhooks deactivated by failures now. */
  autoDisabledCount(): Promise<number>;
}
