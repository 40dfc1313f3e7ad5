// svc top's store: what `svc top` reads of a database, whichever runs (issue 30). Its seam is
// the reader's two methods (TopStore), not the data source below: the Store wires a reader
// (topReader), the CLI and GET /v1/top call only these two, and one view (view.ts) makes them
// of either store's TopData, so a contract test of the reader holds both stores' SQL to the
// same answers (test/contract/top.test.ts).
import type { QueueRecipient } from '../delivery/index.ts';
import type { NodeRow } from '../nodes/index.ts';
import type { TopFilter } from './filter.ts';
import type { EmailDetail, LatestEmail, Snapshot } from './schema.ts';

export interface TopStore {
  /**
   * One reading of the store at `now` (the clock's by default): the last minute's events per
   * type and per second (accepted: queued and simulated; delivered; bounced: bounced and failed),
   * this and the previous UTC hour's rollup, the queue (recipients waiting, the oldest's age),
   * the busiest destinations (10 at most: waiting, then last minute's mail, then name) with
   * their throttles, the LATEST newest emails that pass `filter`, the webhooks (events pending,
   * failed attempts of the last hour, auto-disabled ones) and the live nodes with their relay
   * sessions; scoped to the reader's project, or the whole server. Each reading adds only the
   * events and webhook attempts written since the one before (also those committed late, below
   * a seq read already, on PostgreSQL). Reads only.
   */
  snapshot(filter?: TopFilter, now?: number): Promise<Snapshot>;
  /**
   * One email's events (in the order written, with the recipient and the reply or reason) and
   * each recipient's standing in the queue, as a line; null when there is none, or it is not
   * in the reader's project. Reads only.
   */
  detail(emailId: string): Promise<EmailDetail | null>;
}

/**
 * What `svc top` reads from a database: the data source repo.ts (SQLite) and repo-pg.ts
 * (PostgreSQL) each build, scoped to one project or the whole server, under one view (view.ts).
 * Reads only.
 */
export interface TopData {
  /**
   * The events a reading adds, from one snapshot of the store: those with seq in (after, upto]
   * (`after` null at the first reading: `upto` less EVENT_SCAN), and those of `late` that have
   * committed since, counted per second ('YYYY-MM-DDTHH:MM:SS') and type; the delivered,
   * bounced and failed ones also per recipient's domain. `missing`: the seqs up to `upto`
   * that are not there yet (a transaction still open, or rolled back), to look for again.
   */
  newEvents(after: number | null, late: number[]): Promise<NewRows<NewEvents>>;
  /** Failed webhook attempts as `newEvents` reads events (DELIVERY_SCAN at first), per minute ('YYYY-MM-DDTHH:MM'). */
  newFailures(after: number | null, late: number[]): Promise<NewRows<{ minute: string; n: number }[]>>;
  /** The hourly rollup (email_stats) of one UTC hour ('YYYY-MM-DDTHH'), summed per event type. */
  hour(hour: string): Promise<{ type: string; n: number }[]>;
  /** The recipients waiting for an attempt, and the creation time of the oldest email among them (null when none). */
  queue(): Promise<{ recipients: number; oldest: string | null }>;
  /** Per destination domain, the recipients waiting, and of those the ones deferred (attempted before). */
  waiting(): Promise<{ domain: string; waiting: number; deferred: number }[]>;
  /** Every destination throttle (the whole server's: the view keeps those of the scope's destinations). */
  throttles(): Promise<{ domain: string; concurrency: number; paused_until: string | null; reason: string | null }[]>;
  /** The MTA-STS policies delivery holds unexpired at `at` (ISO), by domain: their modes. */
  stsModes(at: string): Promise<{ domain: string; mode: string }[]>;
  /** The ids of the projects in scope: every project, or the one read. */
  projects(): Promise<string[]>;
  /**
   * The project's newest emails (LATEST at most, newest first by seq) that pass the filter
   * (status, recipient in any case, tag), their `to` parsed.
   */
  latest(projectId: string, f: TopFilter): Promise<(LatestEmail & { seq: number })[]>;
  /** Webhook events in the outbox not yet sent (not skipped), for the webhooks in scope. */
  pendingWebhookEvents(): Promise<number>;
  /** The webhooks in scope that were disabled for failing, by id. */
  autoDisabledWebhooks(): Promise<{ id: string; url: string }[]>;
  /** The servers (nodes) seen at or after `since` (ISO), by id: the whole store's, whatever the scope. */
  nodes(since: string): Promise<NodeRow[]>;
  /** The email with this id in any project (the view checks its scope), undefined when none. */
  email(emailId: string): Promise<{ id: string; status: string; project_id: string } | undefined>;
  /** Per recipient of the email, where it stands in the queue and its destination's throttle. */
  explain(emailId: string): Promise<QueueRecipient[]>;
  /** The email's events, in the order they were written. */
  emailEvents(emailId: string): Promise<{ type: string; created_at: string; data: string }[]>;
}

export interface NewEvents {
  events: { second: string; type: string; n: number }[];
  settled: { second: string; type: string; domain: string; n: number }[];
}

export interface NewRows<T> {
  upto: number;
  rows: T;
  missing: number[];
}
