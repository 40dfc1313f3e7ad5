import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { iso } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { ConnectionInfo } from './job.ts';
import type { SharedThrottle } from './throttle.ts';
import { summarize, type RecipientState } from './status.ts';
import { lateBounceWrite, outcomeWrites, type RecipientOutcome } from './outcome-writes.ts';
import type {
  ClaimedEmail,
  DeliveryStore,
  DueRow,
  FoundRecipient,
  LeasedRow,
  QueueRecipient,
  QueueStats,
  StoredStsPolicy,
} from './store.ts';

export type {
  ClaimedEmail,
  DueRow,
  LeasedRow,
  QueueRecipient,
  RecipientOutcome,
  RecipientRef,
  Stamp,
} from './store.ts';

/**
 * The queue for /metrics and `svc top`: recipients waiting for an attempt or being tried
 * (a due time is set until the outcome is final, scheduled ones included), and the time the
 * oldest email among them was due: its schedule, or its acceptance (a schedule ahead is not a
 * wait); the partial index recipients_due walks only those rows.
 */
export const QUEUE_STATS_SQL = `SELECT count(*) AS recipients, min(coalesce(e.scheduled_at, e.created_at)) AS oldest
  FROM recipients r JOIN emails e ON e.seq = r.email_seq WHERE r.next_attempt_at IS NOT NULL`;

/** Per recipient of an email (by id): where it stands in the queue, its last reply, and its destination's throttle. */
export const EXPLAIN_SQL = `SELECT r.address, r.kind, r.status, r.attempts, r.next_attempt_at, r.last_attempt_at, r.last_error,
    r.domain, r.mx_host, r.smtp_code, r.smtp_enhanced, r.smtp_text, r.bounce_type, r.bounce_category, r.bounce_rule,
    r.sent_at, r.delivered_at, t.concurrency AS throttle_concurrency, t.paused_until AS throttle_paused_until, t.reason AS throttle_reason,
    p.mode AS sts_mode, p.policy_id AS sts_policy_id, p.expires_at AS sts_expires_at
  FROM recipients r JOIN emails e ON e.seq = r.email_seq LEFT JOIN destination_throttles t ON t.domain = r.domain
    LEFT JOIN mta_sts_policies p ON p.domain = r.domain
  WHERE e.id = +? ORDER BY r.id`;

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
  if (q.sts_mode)
    parts.push(`${q.domain} MTA-STS ${q.sts_mode} (policy ${q.sts_policy_id}, until ${q.sts_expires_at})`);
  return parts.join('; ');
}

/** The delivery store on SQLite (store.ts): the queue's claims under a lease, outcomes, throttles. */
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
): DeliveryStore {
  // `LIMIT +@limit`, `email_seq = +?`: with a bare parameter there, SQLite (3.54) plans with the bound
  // value and re-prepares the statement every time it is bound anew (~5 µs, 3 times per transaction
  // delivered). Unary plus leaves the value as it is and keeps the plan independent of it.
  const due = db.prepare<{ now: string; limit: number }, DueRow>(
    `SELECT id, email_seq, address, domain, attempts, last_error, delay_notified FROM recipients
     WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
     ORDER BY next_attempt_at, email_seq LIMIT +@limit`,
  );
  const lease = db.prepare(
    `UPDATE recipients SET lease_until = @lease, lease_token = @token, status = 'SENDING', attempts = attempts + 1,
       last_attempt_at = @now, updated_at = @now
     WHERE id = @id AND next_attempt_at IS NOT NULL AND next_attempt_at <= @now
       AND (lease_until IS NULL OR lease_until <= @now)`,
  );
  // A join with `= ?` is re-prepared by SQLite whenever a value is bound, and better-sqlite3 then
  // compiles a new builder for its rows: 277 µs of CPU for this read's 46 columns, once per claimed
  // email (docs/performance.md, issue 36; test/sqlite-prepared-once.test.ts). `+?` keeps the plan.
  const email = db.prepare<[number], ClaimedEmail['row']>(
    'SELECT e.*, b.html_body, b.text_body, b.raw_message FROM emails e LEFT JOIN email_bodies b ON b.email_seq = e.seq WHERE e.seq = +?',
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
       sent_at = coalesce(sent_at, @sent_at), delivered_at = @delivered_at, delay_notified = @delay_notified,
       updated_at = @now
     WHERE id = @id AND email_seq = +@seq AND lease_token = @lease`,
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
  const queueStats = db.prepare<[], QueueStats>(QUEUE_STATS_SQL);
  const throttles = db.prepare<[], SharedThrottle>(
    'SELECT domain, concurrency, paused_until, updated_at FROM destination_throttles ORDER BY domain',
  );
  const recipientByAddress = db.prepare<[number, string], FoundRecipient>(
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
  const saveSts = db.prepare(
    `INSERT INTO mta_sts_policies (domain, policy_id, mode, mx, max_age, fetched_at, expires_at)
     VALUES (@domain, @policy_id, @mode, @mx, @max_age, @fetched_at, @expires_at)
     ON CONFLICT (domain) DO UPDATE SET policy_id = excluded.policy_id, mode = excluded.mode, mx = excluded.mx,
       max_age = excluded.max_age, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
  );
  const stsRows = db.prepare<[string], Omit<StoredStsPolicy, 'mx'> & { mx: string }>(
    'SELECT domain, policy_id, mode, mx, max_age, fetched_at, expires_at FROM mta_sts_policies WHERE expires_at > ? ORDER BY domain',
  );
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
    findDue: (now, limit) => Promise.resolve(due.all({ now: iso(now), limit })),
    findEmails: (seqs) =>
      Promise.resolve(seqs.map((seq) => ({ seq, row: email.get(seq)!, attachments: attachments.all(seq) }))),

    claim: (rows, now, leaseMs, stamp) =>
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

    record: (seq, projectId, emailId, conn, outcomes, now, lease, spf = null) =>
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

    queueStats: () => Promise.resolve(queueStats.get()!),
    throttledNow: () => Promise.resolve(throttles.all()),
    findRecipient: (seq, address) => Promise.resolve(recipientByAddress.get(seq, address.toLowerCase())),

    recordLateBounce: (r, d, source, now) =>
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

    recordComplaint: (r, feedbackType, source, now) =>
      tx.write(() => {
        const at = iso(now);
        if (!complaint.run({ id: r.recipientId, now: at }).changes) return false;
        refreshEmail(r.seq, at);
        addEvent(r.seq, 'complained', { recipient: r.address, feedback_type: feedbackType, source }, at);
        deps.suppress(r.projectId, r.address.toLowerCase(), r.emailId, at, 'COMPLAINT');
        return true;
      }),

    renew: (ids, lease, until) =>
      tx.write(() => {
        const at = iso(until);
        for (const id of ids) renewLease.run(at, id, lease);
      }),
    release: (ids, lease) => tx.write(() => ids.forEach((id) => release.run(id, lease))),
    explain: (emailId) => Promise.resolve(explainRows.all(emailId)),
    saveThrottle: (domain, state, now) =>
      tx.write(() => {
        if (state) saveThrottle.run({ domain, ...state, at: iso(now) });
        else clearThrottle.run(domain);
      }),
    saveStsPolicy: (p) => tx.write(() => void saveSts.run({ ...p, mx: JSON.stringify(p.mx) })),
    stsPolicies: (now) =>
      Promise.resolve(stsRows.all(iso(now)).map((r) => ({ ...r, mx: JSON.parse(r.mx) as string[] }))),
    // Single server: leases left by a process that died are void at start.
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
    // was claimed again records nothing, not even its connection. Only a recipient of `seq`: the
    // events go on that email, and its status is the one refreshed.
    const changed = setRecipient.run({
      ...state,
      id: o.recipient_id,
      seq,
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
