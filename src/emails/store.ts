// The emails store: what the emails domain asks of a database, whichever runs. repo.ts (SQLite)
// and repo-pg.ts (PostgreSQL) implement it; test/contract/emails.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { VolumeLimits } from '../limits/index.ts';
import type { AuthCheck } from '../keys/index.ts';
import type { Attachment } from './content.ts';
import type { EmailStatus, EventType, ListQuery } from './schema.ts';

export interface NewEmail {
  id: string;
  project_id: string;
  api_key_id: string | null;
  env: 'LIVE' | 'TEST';
  source: 'API' | 'SMTP' | 'CAMPAIGN';
  status: EmailStatus;
  from_email: string;
  from_name: string | null;
  to: string[];
  cc: string[] | null;
  bcc: string[] | null;
  reply_to: string[] | null;
  subject: string;
  tags: string[];
  headers: Record<string, string>;
  html: string | null;
  text: string | null;
  /**
   * The message as its client wrote it (SMTP relay, POST /v1/emails/raw; issue 33), stored and
   * delivered as it is; `html`, `text` and `attachments` are then empty. Null for a composed email.
   */
  raw?: Buffer | null;
  template_id: string | null;
  template_version: number | null;
  created_at: string;
  attachments: Attachment[];
  event: { id: string; type: EventType; data: Record<string, unknown> };
  /** The project's one onboarding-trial email (checked once per project in the accept transaction). */
  trial?: boolean;
  /** The id of the email this one resends. */
  resent_from?: string | null;
  /** A Message-ID the client gave (SMTP relay), without angle brackets; delivery makes one otherwise. */
  message_id?: string | null;
  /** One-click unsubscribe asked (true) or refused (false) for this email; null: the project's setting. */
  one_click_unsubscribe?: boolean | null;
  /** When a LIVE email goes out (issue 35; schedule.ts): its recipients are first due then. Null: at once. */
  scheduled_at?: string | null;
  /** Key/value pairs of the send (issue 35; decisions.md, "Metadata"), carried in its webhooks. */
  metadata?: Record<string, string> | null;
}

/** What a schedule change does: cancel the email, with this event id, or move its time. */
export type ScheduleChange = { cancel: { eventId: string } } | { at: string };

/** How a schedule change went: done (the email as it now is), no such email, or too late (its status). */
export type ScheduleOutcome =
  | { outcome: 'done'; status: string; scheduled_at: string | null }
  | { outcome: 'missing' }
  | { outcome: 'started'; status: string };

/** A row of `emails` (with `html_body`, `text_body` and `raw_message` when read by id). */
export type EmailRow = Record<string, unknown> & { seq: number; id: string; project_id: string };
export interface EventRow {
  id: string;
  type: EventType;
  data: string;
  ip_address: string | null;
  user_agent: string | null;
  created_at: string;
}

export interface Recipient {
  address: string;
  kind: 'to' | 'cc' | 'bcc';
}

/** An attachment as the dashboard lists it: its name, type and size in bytes, not its content. */
export interface AttachmentInfo {
  filename: string;
  content_type: string;
  size: number;
  content_id: string | null;
}

export interface SkippedRecipient {
  email: string;
  reason: string;
}

export interface SendResponse {
  id: string;
  status: EmailStatus;
  skipped_recipients: SkippedRecipient[];
}

export interface AcceptOptions {
  /** Apply the suppression list (LIVE only). */
  suppress: boolean;
  /** Count recipients against the organization's volume (LIVE only). */
  volume: { orgId: string; limits: VolumeLimits; now: number } | null;
  idempotency: { key: string; hash: string; expiresAt: string } | null;
  /**
   * The auth epoch the sender's key was kept under (keys/epoch.ts), confirmed before anything
   * else inside the transaction: AuthEpochMoved when it moved, and nothing is written. Only on
   * a store whose reads are synchronous (SQLite's findKept gives it).
   */
  auth?: AuthCheck;
}

/** One email of a batch, ready to accept. */
export interface AcceptItem {
  email: NewEmail;
  recipients: Recipient[];
  opts: AcceptOptions;
}

export type AcceptResult = { replay: true; response: SendResponse } | { replay: false; response: SendResponse };

/** Where a retention batch starts: after this email, plus the emails it held back before. */
export interface RetentionPage {
  after: number;
  held: number[];
  limit: number;
}

/**
 * What a retention batch did: `changed` emails it acted on, the seq to continue `after`,
 * the emails it `held` (still QUEUED or SENDING, to look at again), and whether it is `done`.
 */
export interface RetentionBatch {
  changed: number;
  next: number;
  held: number[];
  done: boolean;
}

export interface EmailsStore {
  /**
   * Accepts one email in one transaction: with `opts.idempotency`, a committed record for the
   * key replays its response (`replay: true`, nothing written) or, for another request hash,
   * refuses `idempotency_key_reused`; a `trial` email of a project that has one already is
   * refused `trial_restricted`; with `opts.suppress`, suppressed recipients are dropped from
   * the email (and its to/cc/bcc, so `email` is changed) and listed in `skipped_recipients`,
   * and none left is `all_recipients_suppressed`; with `opts.volume`, the kept recipients are
   * counted against the organization's volume (`monthly_volume_exceeded`,
   * `daily_limit_exceeded`, nothing counted). Then the email, its body, tags, recipients (in
   * the email's status, due now when LIVE), attachments in their order and first event are
   * written (the triggers add the stats and the webhook outbox rows), with the idempotency
   * record. A refusal writes nothing.
   */
  acceptEmail(e: NewEmail, recipients: Recipient[], opts: AcceptOptions): Promise<AcceptResult>;
  /**
   * A batch's emails, each accepted as `acceptEmail` does and on its own (one's refusal is its
   * own rejected outcome and leaves the others), written in their order so that their seqs
   * follow the request; one outcome per item, in the items' order.
   */
  acceptEmails(items: readonly AcceptItem[]): Promise<PromiseSettledResult<AcceptResult>[]>;
  /**
   * A committed idempotency record for this key not expired at `nowIso`, as its replay; another
   * request hash under the key is refused `idempotency_key_reused`; undefined when none (the
   * service checks before doing any work). Reads only.
   */
  findIdempotent(projectId: string, key: string, hash: string, nowIso: string): Promise<AcceptResult | undefined>;
  /**
   * Accepts a resend as `acceptEmail` does, with the audit row `audited` builds from the
   * response (who was skipped) in the same transaction; a refusal writes neither.
   */
  resendEmail(
    e: NewEmail,
    recipients: Recipient[],
    opts: AcceptOptions,
    audited: (r: SendResponse) => Audited,
  ): Promise<SendResponse>;
  /**
   * Cancels a LIVE email that has not started, or moves its time (issue 35; schedule-change.ts):
   * in one transaction, its recipients leave the queue (CANCELED, with the `canceled` event
   * `cancel` names) or are first due at `at`. Not started: the email is QUEUED and no recipient
   * has been attempted or claimed; a claim that comes first wins, and the change is refused.
   * `audited` (a member's change, from the dashboard) is written with a change that is made.
   */
  changeSchedule(
    projectId: string,
    id: string,
    change: ScheduleChange,
    nowIso: string,
    audited?: Audited,
  ): Promise<ScheduleOutcome>;
  /**
   * Why `address` (any case) is on the project's suppression list, or null (the relay refuses
   * it at RCPT). Reads only.
   */
  suppressionOf(projectId: string, address: string): Promise<string | null>;
  /**
   * One batch of body retention (issue 16), in one short write transaction: the emails of
   * `page.held` again, then up to `page.limit` emails after `page.after` in seq order (the order
   * emails came in); the body and attachments of each final email created before `cutoff` are
   * dropped (the row, its recipients and events stay). Emails still QUEUED or SENDING are
   * `held`; `done` once an email at or after `cutoff` is reached, or fewer than `limit` remain.
   */
  dropContentBefore(cutoff: string, page: RetentionPage): Promise<RetentionBatch>;
  /**
   * One batch of email retention (`--email-retention`), walked as `dropContentBefore`: each
   * final email created before `cutoff` is deleted with its body, recipients, tags, attachments
   * and events. The hourly stats (email_stats) and the usage counters stay.
   */
  deleteBefore(cutoff: string, page: RetentionPage): Promise<RetentionBatch>;
  /** The email with this id in any project, with its `html_body` and `text_body`; undefined when none. */
  findById(id: string): Promise<EmailRow | undefined>;
  /** The stored attachments of an email (by seq), in their order; none after body retention. */
  listAttachments(seq: number): Promise<Attachment[]>;
  /** The same attachments without their content (what a page lists reads no blob); none after body retention. */
  listAttachmentInfo(seq: number): Promise<AttachmentInfo[]>;
  /**
   * A page of the project's emails (rows without bodies), newest first (by seq, or by
   * `created_at` then seq with a date window), filtered by status, sender (any case),
   * recipient (any case), tag and the window; `before`/`after` an email id of the project
   * (an unknown cursor gives an empty page), `after` still answered newest first.
   */
  list(projectId: string, q: ListQuery): Promise<EmailRow[]>;
  /** The email's events (by seq), in the order they were written. */
  listEvents(seq: number): Promise<EventRow[]>;
}
