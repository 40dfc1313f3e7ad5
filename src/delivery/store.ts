// The delivery store: what the delivery engine (and the reports about delivered mail, inbound/)
// ask of a database, whichever runs. repo.ts (SQLite) and repo-pg.ts (PostgreSQL) implement it;
// test/contract/delivery.test.ts holds both to it. What an outcome writes is decided once, in
// outcome-writes.ts, and both only execute it.
import type { ConnectionInfo } from './job.ts';
import type { Decision } from './outcome.ts';
import type { RecipientOutcome } from './outcome-writes.ts';
import type { SpfFields } from './spf-verdict.ts';
import type { SharedThrottle } from './throttle.ts';

export type { RecipientOutcome } from './outcome-writes.ts';

/** A recipient due for an attempt, as the engine groups and claims it. */
export interface DueRow {
  id: number;
  email_seq: number;
  address: string;
  domain: string;
  /** Attempts made before this one. */
  attempts: number;
  last_error: string | null;
  /** The `delivery_delayed` notices given so far (outcome-writes.ts, delayLevel): 0 none. */
  delay_notified: number;
}

/** A claimed recipient, with the token of its claim: its outcome is recorded under that token only. */
export type LeasedRow = DueRow & { lease: string };

/** What a claim writes on the email: its Message-ID and how it will be authenticated. */
export interface Stamp {
  message_id: string;
  dkim: { d: string; s: string } | null;
  spf_domain: string;
  from_domain: string;
}

/** The email of a claimed recipient, as a job is built from it. */
export interface ClaimedEmail {
  seq: number;
  row: Record<string, unknown> & { id: string; from_email: string; created_at: string };
  attachments: { filename: string; content_type: string; content: Buffer; content_id: string | null }[];
}

/** A delivered recipient that a later report (a DSN, an ARF complaint) is about. */
export interface RecipientRef {
  seq: number;
  projectId: string;
  emailId: string;
  recipientId: number;
  address: string;
}

/** A recipient of an email, found by its address (inbound reports). */
export interface FoundRecipient {
  id: number;
  address: string;
  status: string;
}

/**
 * Where one recipient stands in the queue, its last reply, and its destination's throttle
 * (`svc emails show`, the dashboard's email view).
 */
export interface QueueRecipient {
  address: string;
  kind: 'to' | 'cc' | 'bcc';
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  domain: string;
  /** The MX host of its last attempt that reached a server. */
  mx_host: string | null;
  /** Its last reply (the reply that decided it once it is final). */
  smtp_code: number | null;
  smtp_enhanced: string | null;
  smtp_text: string | null;
  bounce_type: string | null;
  bounce_category: string | null;
  /** Which classifier rule decided its last bounce or retry (describeRule's line). */
  bounce_rule: string | null;
  sent_at: string | null;
  delivered_at: string | null;
  throttle_concurrency: number | null;
  throttle_paused_until: string | null;
  throttle_reason: string | null;
  /** The destination's MTA-STS policy as last fetched (RFC 8461): its mode, id and expiry; null: none known. */
  sts_mode: 'enforce' | 'testing' | 'none' | null;
  sts_policy_id: string | null;
  sts_expires_at: string | null;
}

/** The queue's size for /metrics and `svc top`. */
export interface QueueStats {
  recipients: number;
  /** The creation time of the oldest email among them; null when none waits. */
  oldest: string | null;
}

/** A destination's slow-down as one node decided it, for the others to adopt. */
export interface ThrottleState {
  concurrency: number;
  paused_until: string | null;
  reason: string;
}

export interface DeliveryStore {
  /**
   * Recipients due at `now` (ms) and not under a live lease (none, or one that ran out by
   * `now`), oldest due first (then by email), at most `limit`. Writes nothing: finding a row is
   * no claim on it.
   */
  findDue(now: number, limit: number): Promise<DueRow[]>;
  /**
   * The emails `seqs` (claimed recipients', so they exist), in the order given, in one read (a
   * claim's emails together): each row with its bodies, its attachments in order. A seq given
   * twice is read once and returned twice.
   */
  findEmails(seqs: number[]): Promise<ClaimedEmail[]>;
  /**
   * Leases those of `rows` still due and not under a live lease at `now` (ms), until
   * `now + leaseMs`, under one new token, in one transaction: each becomes SENDING with one more
   * attempt; each claimed email still QUEUED or SENDING gets its `stamp` (status SENDING, its
   * Message-ID unless it has one, DKIM and SPF as it will be signed); then one `sending` event
   * per claimed recipient (`attempt`, and `previous_attempt` on a retry), with its webhook
   * outbox rows. Returns the rows it got, in the order given, each with the token; a row another
   * claim holds (or just delivered) is left out, never claimed twice while its lease holds.
   * PostgreSQL skips rows another node is claiming at this moment rather than wait for them.
   */
  claim(rows: DueRow[], now: number, leaseMs: number, stamp: Map<number, Stamp>): Promise<LeasedRow[]>;
  /**
   * Records the outcomes of one SMTP transaction of email `seq`, in one transaction and only for
   * its recipients still held under `lease`: each recipient's new state as outcome-writes.ts decides
   * it (lease cleared; a retry due again at its time), the MX host of `conn`, a hard bounce's
   * suppression, `spf` on the email, the email's status from all its recipients, and then the
   * outcomes' events (smtp_connected, sent, delivered, bounced, failed) with their webhook
   * outbox rows, which carry that new status. Returns how many outcomes were recorded: one whose
   * lease ran out and was retaken, or about another email's recipient, writes nothing at all,
   * and when none is recorded nothing is written.
   */
  record(
    seq: number,
    projectId: string,
    emailId: string,
    conn: ConnectionInfo | null,
    outcomes: RecipientOutcome[],
    now: number,
    lease: string,
    spf?: SpfFields | null,
  ): Promise<number>;
  /** Moves to `until` (ms) the lease of those `ids` this claim (`lease`) still holds; others are untouched. */
  renew(ids: number[], lease: string, until: number): Promise<void>;
  /**
   * Puts back in the queue, untouched, those `ids` still SENDING under this claim (`lease`):
   * QUEUED, unleased, due as before, the claim's attempt not counted (shutdown, a paused
   * destination). The claim's `sending` events stay.
   */
  release(ids: number[], lease: string): Promise<void>;
  /**
   * At start, the leases a process that died left: SQLite's single server voids them all (their
   * recipients are due again at once) and returns how many; PostgreSQL's nodes void none (a
   * lease may be a live node's; a dead node's expire) and return 0.
   */
  releaseStaleLeases(): Promise<number>;
  /** Recipients waiting for an attempt or being tried, and the creation time of the oldest email among them. */
  queueStats(): Promise<QueueStats>;
  /** The destinations slowed down now, by domain (byte order): a row exists only while one is. */
  throttledNow(): Promise<SharedThrottle[]>;
  /** The recipient of email `seq` with `address` (any case), or undefined when it has none. */
  findRecipient(seq: number, address: string): Promise<FoundRecipient | undefined>;
  /**
   * A bounce that arrived after the transaction (a DSN), in one transaction: a SENT or
   * DELIVERED recipient becomes BOUNCED (the reply, the rule, `last_error` `source: …`; its MX
   * host and sent time kept, delivered time cleared), the email's status, then its `bounced`
   * event (with `source`) and webhook outbox rows, and the suppression a hard bounce earns.
   * False, and nothing written, when the recipient was not SENT or DELIVERED.
   */
  recordLateBounce(
    r: RecipientRef,
    d: Extract<Decision, { kind: 'bounced' }>,
    source: string,
    now: number,
  ): Promise<boolean>;
  /**
   * A spam complaint (an ARF report) about a DELIVERED recipient, in one transaction:
   * COMPLAINED, the email's status, its `complained` event and webhook outbox rows, and the
   * address suppressed (COMPLAINT). False, and nothing written, when it was not DELIVERED.
   */
  recordComplaint(r: RecipientRef, feedbackType: string, source: string, now: number): Promise<boolean>;
  /** Per recipient of the email (by id), in recipient order: where it stands, its last reply and why; empty when no such email. */
  explain(emailId: string): Promise<QueueRecipient[]>;
  /**
   * Stores a destination's slow-down (`state`) at `now` (ms), replacing the one it had, so
   * that other processes and nodes see it; null: it recovered, its row is deleted.
   */
  saveThrottle(domain: string, state: ThrottleState | null, now: number): Promise<void>;
  /** Keeps a domain's newly fetched MTA-STS policy, replacing the one it had (RFC 8461 5.1). */
  saveStsPolicy(p: StoredStsPolicy): Promise<void>;
  /** The MTA-STS policies kept, unexpired at `now` (ms), by domain in byte order: what a restart seeds its cache with. */
  stsPolicies(now: number): Promise<StoredStsPolicy[]>;
}

/** An MTA-STS policy as kept between restarts; times ISO-8601 UTC. */
export interface StoredStsPolicy {
  domain: string;
  policy_id: string;
  mode: 'enforce' | 'testing' | 'none';
  mx: string[];
  max_age: number;
  fetched_at: string;
  expires_at: string;
}
