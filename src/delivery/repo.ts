import type { Port } from '../store/port.ts';
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { iso } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { ConnectionInfo } from './job.ts';
import type { SpfFields } from './spf-verdict.ts';
import type { Decision } from './outcome.ts';
import type { SharedThrottle } from './throttle.ts';
import { summarize, type RecipientState } from './status.ts';
import { lateBounceWrite, outcomeWrites, type RecipientOutcome } from './outcome-writes.ts';

export type { RecipientOutcome } from './outcome-writes.ts';

export interface DueRow {
  id: number;
  email_seq: number;
  address: string;
  domain: string;
  attempts: number;
  last_error: string | null;
}

/** What a claim writes on the email: its Message-ID and how it will be authenticated. */
/** A delivered recipient that a later report (a DSN, an ARF complaint) is about. */
export interface RecipientRef {
  seq: number;
  projectId: string;
  emailId: string;
  recipientId: number;
  address: string;
}

/** A claimed recipient, with the token of its claim: its outcome is recorded under that token only. */
export type LeasedRow = DueRow & { lease: string };

export interface Stamp {
  message_id: string;
  dkim: { d: string; s: string } | null;
  spf_domain: string;
  from_domain: string;
}

export interface QueueRecipient {
  address: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  domain: string;
  /** Which classifier rule decided its last bounce or retry (describeRule's line). */
  bounce_rule: string | null;
  throttle_concurrency: number | null;
  throttle_paused_until: string | null;
  throttle_reason: string | null;
}

export interface ClaimedEmail {
  seq: number;
  row: Record<string, unknown> & { id: string; from_email: string; created_at: string };
  attachments: { filename: string; content_type: string; content: Buffer; content_id: string | null }[];
}

/**
 * The queue for /metrics and `svc top`: recipients waiting for an attempt or being tried
 * (a due time is set until the outcome is final), and the creation time of the oldest
 * email among them; the partial index recipients_due walks only those rows.
 */
export const QUEUE_STATS_SQL = `SELECT count(*) AS recipients, min(e.created_at) AS oldest
  FROM recipients r JOIN emails e ON e.seq = r.email_seq WHERE r.next_attempt_at IS NOT NULL`;

/** Per recipient of an email (by id): where it stands in the queue, and its destination's throttle. */
export const EXPLAIN_SQL = `SELECT r.address, r.status, r.attempts, r.next_attempt_at, r.last_attempt_at, r.last_error, r.domain,
    r.bounce_rule, t.concurrency AS throttle_concurrency, t.paused_until AS throttle_paused_until, t.reason AS throttle_reason
  FROM recipients r JOIN emails e ON e.seq = r.email_seq LEFT JOIN destination_throttles t ON t.domain = r.domain
  WHERE e.id = ? ORDER BY r.id`;

/** Why a recipient waits, or where it stands, in one line (`svc emails show`, `svc top`). */
export function waitingLine(q: QueueRecipient): string {
  const parts = [`${q.address}: ${q.status}`, `attempts ${q.attempts}`];
  if (q.next_attempt_at && (q.status === 'QUEUED' || q.status === 'SENDING'))
    parts.push(`next attempt ${q.next_attempt_at}`);
  if (q.last_error) parts.push(`last: ${q.last_error}`);
  if (q.throttle_concurrency !== null) {
    const until = q.throttle_paused_until ? `, paused until ${q.throttle_paused_until}` : '';
    parts.push(`${q.domain} throttled (concurrency ${q.throttle_concurrency}${until}: ${q.throttle_reason ?? ''})`);
  }
  return parts.join('; ');
}

/** SQL of the delivery queue: claim due recipients with a lease, record results, explain. */
export function createDeliveryRepo(
  db: Db,
  tx: Committer,
  deps: {
    /** Puts an address on the project's suppression list, in the caller's transaction. */
    suppress: (
      projectId: string,
      address: string,
      emailId: string,
      at: string,
      reason: 'HARD_BOUNCE' | 'COMPLAINT',
    ) => void;
  },
) {
  // `LIMIT +@limit`, `email_seq = +?`: with a bare parameter there, SQLite (3.54) plans with the bound
  // value and re-prepares the statement every time it is bound anew (~5 µs, 3 times per transaction
  // delivered). Unary plus leaves the value as it is and keeps the plan independent of it.
  const due = db.prepare<{ now: string; limit: number }, DueRow>(
    `SELECT id, email_seq, address, domain, attempts, last_error FROM recipients
     WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
     ORDER BY next_attempt_at, email_seq LIMIT +@limit`,
  );
  const lease = db.prepare(
    `UPDATE recipients SET lease_until = @lease, lease_token = @token, status = 'SENDING', attempts = attempts + 1,
       last_attempt_at = @now, updated_at = @now
     WHERE id = @id AND next_attempt_at IS NOT NULL AND next_attempt_at <= @now
       AND (lease_until IS NULL OR lease_until <= @now)`,
  );
  const email = db.prepare<[number], ClaimedEmail['row']>(
    'SELECT e.*, b.html_body, b.text_body FROM emails e LEFT JOIN email_bodies b ON b.email_seq = e.seq WHERE e.seq = ?',
  );
  const attachments = db.prepare<[number], ClaimedEmail['attachments'][number]>(
    'SELECT filename, content_type, content, content_id FROM attachments WHERE email_seq = +? ORDER BY position',
  );
  const event = db.prepare('INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)');
  const toSending = db.prepare(
    `UPDATE emails SET status = 'SENDING', message_id = coalesce(message_id, @message_id), dkim_d = @dkim_d,
       dkim_selector = @dkim_selector, dkim_signing_status = @dkim_status, dkim_aligned = @signed,
       spf_domain = @spf_domain, spf_aligned = @spf_aligned, dmarc_aligned = @signed
     WHERE seq = @seq AND status IN ('QUEUED', 'SENDING')`,
  );
  const setSpf = db.prepare(
    'UPDATE emails SET spf_aligned = @aligned, spf_authorized_ip = @authorized WHERE seq = @seq',
  );
  const recipientsOf = db.prepare<[number], RecipientState>(
    `SELECT status, bounce_type, bounce_category, bounce_rule, smtp_code, smtp_enhanced, smtp_text, sent_at, delivered_at,
       updated_at FROM recipients WHERE email_seq = +? ORDER BY id`,
  );
  const setRecipient = db.prepare(
    `UPDATE recipients SET status = @status, next_attempt_at = @next, lease_until = NULL, lease_token = NULL,
       last_error = @detail, smtp_code = @code, smtp_enhanced = @enhanced, smtp_text = @text, mx_host = @mx_host,
       bounce_type = @bounce_type, bounce_category = @category, bounce_rule = @rule,
       sent_at = coalesce(sent_at, @sent_at), delivered_at = @delivered_at, updated_at = @now
     WHERE id = @id AND lease_token = @lease`,
  );
  const setEmail = db.prepare(
    `UPDATE emails SET status = @status, sent_at = @sent_at, delivered_at = @delivered_at, failed_at = @failed_at,
       bounce_type = @bounce_type, bounce_category = @bounce_category, bounce_rule = @bounce_rule,
       final_smtp_code = @final_smtp_code,
       final_smtp_enhanced = @final_smtp_enhanced, final_smtp_text = @final_smtp_text WHERE seq = @seq`,
  );
  // A bounce that comes after the transaction (a DSN) turns a delivered recipient BOUNCED;
  // the MX host and the time it was sent stay as they were.
  const lateBounce = db.prepare(
    `UPDATE recipients SET status = 'BOUNCED', bounce_type = @bounce_type, bounce_category = @category,
       bounce_rule = @rule, smtp_code = @code, smtp_enhanced = @enhanced, smtp_text = @text, last_error = @detail, delivered_at = NULL,
       updated_at = @now
     WHERE id = @id AND status IN ('SENT', 'DELIVERED')`,
  );
  // A spam complaint (ARF) about a delivered recipient.
  const complaint = db.prepare(
    `UPDATE recipients SET status = 'COMPLAINED', updated_at = @now WHERE id = @id AND status = 'DELIVERED'`,
  );
  const queueStats = db.prepare<[], { recipients: number; oldest: string | null }>(QUEUE_STATS_SQL);
  const throttles = db.prepare<[], SharedThrottle>(
    'SELECT domain, concurrency, paused_until, updated_at FROM destination_throttles ORDER BY domain',
  );
  const recipientByAddress = db.prepare<[number, string], { id: number; address: string; status: string }>(
    'SELECT id, address, status FROM recipients WHERE email_seq = ? AND address_lc = ?',
  );
  const release = db.prepare(
    `UPDATE recipients SET lease_until = NULL, lease_token = NULL, status = 'QUEUED', attempts = max(attempts - 1, 0)
     WHERE id = ? AND status = 'SENDING' AND lease_token = ?`,
  );
  const explainRows = db.prepare<[string], QueueRecipient>(EXPLAIN_SQL);
  const saveThrottle = db.prepare(
    `INSERT INTO destination_throttles (domain, concurrency, paused_until, reason, updated_at) VALUES (@domain, @concurrency, @paused_until, @reason, @at)
     ON CONFLICT (domain) DO UPDATE SET concurrency = excluded.concurrency, paused_until = excluded.paused_until,
       reason = excluded.reason, updated_at = excluded.updated_at`,
  );
  const clearThrottle = db.prepare('DELETE FROM destination_throttles WHERE domain = ?');
  const renewLease = db.prepare('UPDATE recipients SET lease_until = ? WHERE id = ? AND lease_token = ?');
  const releaseAll = db.prepare(
    `UPDATE recipients SET lease_until = NULL, lease_token = NULL WHERE lease_until IS NOT NULL`,
  );
  const addEvent = (seq: number, type: string, data: object, at: string) =>
    event.run(newId(Date.parse(at)), seq, type, JSON.stringify(data), at);

  function refreshEmail(seq: number, now: string): void {
    const s = summarize(recipientsOf.all(seq), now);
    if (s) setEmail.run({ seq, ...s });
  }

  return {
    /** Due recipient rows (not leased), oldest first. */
    findDue: (now: number, limit: number) => Promise.resolve(due.all({ now: iso(now), limit })),
    findEmail: (seq: number): Promise<ClaimedEmail> =>
      Promise.resolve({ seq, row: email.get(seq)!, attachments: attachments.all(seq) }),

    /**
     * Leases rows for one attempt under one token and writes their `sending` events; returns
     * the rows it got, each with the token its outcome is recorded under.
     */
    claim: (rows: DueRow[], now: number, leaseMs: number, stamp: Map<number, Stamp>) =>
      tx.write((): LeasedRow[] => {
        const at = iso(now);
        const token = randomUUID();
        const until = iso(now + leaseMs);
        const got = rows
          .filter((r) => lease.run({ id: r.id, now: at, lease: until, token }).changes > 0)
          .map((r) => ({ ...r, lease: token }));
        // The emails' status first, then their events (outcome-writes.ts, "status, then events").
        const claimed = new Set(got.map((r) => r.email_seq));
        for (const [seq, st] of stamp) {
          if (!claimed.has(seq)) continue;
          toSending.run({
            seq,
            message_id: st.message_id,
            dkim_d: st.dkim?.d ?? null,
            dkim_selector: st.dkim?.s ?? null,
            dkim_status: st.dkim ? 'expected' : 'not_signed',
            // d= is the From domain, so DKIM aligns (and DMARC passes on it) whenever we sign.
            signed: st.dkim ? 1 : 0,
            spf_domain: st.spf_domain,
            // Known once a message left: record() writes SPF evaluated for the address it left from.
            spf_aligned: null,
          });
        }
        // A retry says why the previous attempt did not finish, so the events explain the wait.
        for (const r of got) {
          const data = {
            recipient: r.address,
            attempt: r.attempts + 1,
            ...(r.last_error ? { previous_attempt: r.last_error } : {}),
          };
          addEvent(r.email_seq, 'sending', data, at);
        }
        return got;
      }),

    /** Records the outcomes of one transaction: rows, events, suppressions and the email's status, atomically. */
    record: (
      seq: number,
      projectId: string,
      emailId: string,
      conn: ConnectionInfo | null,
      outcomes: RecipientOutcome[],
      now: number,
      lease: string,
      spf: SpfFields | null = null,
    ) =>
      tx.write(() => {
        const at = iso(now);
        const applied = outcomes
          .map((o) => applyOutcome(seq, projectId, emailId, conn, o, at, lease))
          .filter((events) => events !== undefined);
        if (applied.length === 0) return 0;
        if (spf) setSpf.run({ seq, aligned: spf.spf_aligned ? 1 : 0, authorized: spf.spf_authorized_ip ? 1 : 0 });
        // The email's status, then the events (outcome-writes.ts, "status, then events").
        refreshEmail(seq, at);
        for (const events of applied) for (const [type, data] of events) addEvent(seq, type, data, at);
        return applied.length;
      }),

    /** Recipients waiting or being tried, and the creation time of the oldest email among them. */
    queueStats: () => Promise.resolve(queueStats.get()!),
    /** Destinations slowed down now (a row exists only while one is). */
    throttledNow: () => Promise.resolve(throttles.all()),
    /** The recipient row of an email for an address (any case), if it has one. */
    findRecipient: (seq: number, address: string) =>
      Promise.resolve(recipientByAddress.get(seq, address.toLowerCase())),

    /**
     * Records a bounce that arrived after the transaction (a DSN): a SENT or DELIVERED
     * recipient becomes BOUNCED with its `bounced` event (`source` says where it came
     * from), the suppression a hard bounce earns, and the email's status, atomically.
     * False when the recipient was not SENT or DELIVERED (already bounced, still queued).
     */
    recordLateBounce: (r: RecipientRef, d: Extract<Decision, { kind: 'bounced' }>, source: string, now: number) =>
      tx.write(() => {
        const at = iso(now);
        const { reply, detail, rule, event: data } = lateBounceWrite(r.address, d, source);
        const changed = lateBounce.run({
          id: r.recipientId,
          bounce_type: d.bounce_type,
          category: d.category,
          rule,
          ...reply,
          detail,
          now: at,
        }).changes;
        if (!changed) return false;
        refreshEmail(r.seq, at);
        addEvent(r.seq, 'bounced', data, at);
        if (d.suppress) deps.suppress(r.projectId, r.address.toLowerCase(), r.emailId, at, 'HARD_BOUNCE');
        return true;
      }),

    /**
     * Records a spam complaint (an ARF report) about a DELIVERED recipient: COMPLAINED, a
     * `complained` event, the address on the suppression list (COMPLAINT) and the email's
     * status, atomically. False when the recipient was not DELIVERED.
     */
    recordComplaint: (r: RecipientRef, feedbackType: string, source: string, now: number) =>
      tx.write(() => {
        const at = iso(now);
        if (!complaint.run({ id: r.recipientId, now: at }).changes) return false;
        refreshEmail(r.seq, at);
        addEvent(r.seq, 'complained', { recipient: r.address, feedback_type: feedbackType, source }, at);
        deps.suppress(r.projectId, r.address.toLowerCase(), r.emailId, at, 'COMPLAINT');
        return true;
      }),

    /** Moves the lease of rows this claim (`lease`) still holds to `until`. */
    renew: (ids: number[], lease: string, until: number) =>
      tx.write(() => {
        const at = iso(until);
        for (const id of ids) renewLease.run(at, id, lease);
      }),
    /** Puts rows this claim (`lease`) leased back in the queue untouched (shutdown). */
    release: (ids: number[], lease: string) => tx.write(() => ids.forEach((id) => release.run(id, lease))),
    /** Per recipient: where it stands in the queue and why (for `svc emails show`). */
    explain: (emailId: string) => Promise.resolve(explainRows.all(emailId)),
    /** Persists a destination's slow-down (null = recovered) so other processes can show it. */
    saveThrottle: (
      domain: string,
      state: { concurrency: number; paused_until: string | null; reason: string } | null,
      now: number,
    ) =>
      tx.write(() => {
        if (state) saveThrottle.run({ domain, ...state, at: iso(now) });
        else clearThrottle.run(domain);
      }),
    /** Single node: leases left by a process that died are void at start. */
    releaseStaleLeases: () => tx.write(() => releaseAll.run().changes),
  };

  /** Sets the recipient's row and its suppression; the events it earns (none when another claim took it). */
  function applyOutcome(
    seq: number,
    projectId: string,
    emailId: string,
    conn: ConnectionInfo | null,
    o: RecipientOutcome,
    at: string,
    lease: string,
  ): [type: string, data: object][] | undefined {
    const reply = o.decision.reply;
    const { state, events, suppress } = outcomeWrites(o, conn, at);
    // The row first, under the claim's token: a claim whose lease ran out and whose recipient
    // was claimed again records nothing, not even its connection.
    const changed = setRecipient.run({
      ...state,
      id: o.recipient_id,
      now: at,
      detail: o.detail,
      mx_host: conn?.mx_host ?? null,
      lease,
      code: reply?.code ?? null,
      enhanced: reply?.enhanced ?? null,
      text: reply?.text ?? null,
    }).changes;
    if (changed === 0) return undefined;
    if (suppress) deps.suppress(projectId, o.address.toLowerCase(), emailId, at, 'HARD_BOUNCE');
    return events;
  }
}

/** The delivery repository behind the store seam (SQLite here, PostgreSQL in repo-pg.ts). */
export type DeliveryRepo = Port<ReturnType<typeof createDeliveryRepo>>;
