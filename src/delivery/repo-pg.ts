import { randomUUID } from 'node:crypto';
import { iso } from '../lib/clock.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import type { SharedThrottle } from './throttle.ts';
import { lateBounceWrite, outcomeWrites } from './outcome-writes.ts';
import { stampsUpdate, withEvents, type NewEvent } from './pg-event-writes.ts';
import { refreshEmail, setRecipients } from './pg-outcome-writes.ts';
import { QUEUE_STATS_SQL } from './repo.ts';
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

/** Per recipient of an email (by id): where it stands in the queue, and its destination's throttle. */
export const PG_EXPLAIN_SQL = `SELECT r.address, r.kind, r.status, r.attempts, r.next_attempt_at, r.last_attempt_at, r.last_error,
    r.domain, r.mx_host, r.smtp_code, r.smtp_enhanced, r.smtp_text, r.bounce_type, r.bounce_category, r.bounce_rule,
    r.sent_at, r.delivered_at, t.concurrency AS throttle_concurrency, t.paused_until AS throttle_paused_until,
    t.reason AS throttle_reason, p.mode AS sts_mode, p.policy_id AS sts_policy_id, p.expires_at AS sts_expires_at
  FROM recipients r JOIN emails e ON e.seq = r.email_seq LEFT JOIN destination_throttles t ON t.domain = r.domain
    LEFT JOIN mta_sts_policies p ON p.domain = r.domain
  WHERE e.id = $1 ORDER BY r.id`;

/**
 * Leases the recipients of ids $1 that are due at $2 and not leased, or whose lease ran out,
 * until $3 under the token $4; rows another node is claiming at this moment are skipped, not
 * waited for.
 *
 * The rows are found by their ids alone: `(…) IS TRUE` is true only for a due row, as
 * `next_attempt_at IS NOT NULL AND next_attempt_at <= $2` is, but it implies neither
 * recipients_due's predicate nor a condition that index can serve (decisions.md, "PostgreSQL's
 * hot statements find their rows by key"). recipients' statistics come from a table that is
 * mostly delivered (next_attempt_at NULL), so PostgreSQL took the due rows for a handful and
 * walked the queue through recipients_due to find the ids: in one claim of bench:nodes, 2,358
 * index entries read for 72 rows, 8.6 ms; 4.6 ms a claim on average, growing with the queue
 * (docs/performance.md, issue 36).
 */
export const CLAIM_ROWS = `UPDATE recipients SET lease_until = $3, lease_token = $4, status = 'SENDING', attempts = attempts + 1,
    last_attempt_at = $2, updated_at = $2
  WHERE id IN (SELECT id FROM recipients WHERE id = ANY($1::bigint[]) AND (next_attempt_at <= $2) IS TRUE
                 AND (lease_until IS NULL OR lease_until <= $2) FOR UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * The delivery store on PostgreSQL (store.ts), its queue shared by several nodes (issue 17,
 * item 2):
 *
 * - A claim takes only rows no other claim holds, without waiting for them (`FOR UPDATE SKIP
 *   LOCKED`), and names itself with a token (`lease_token`).
 * - Outcomes and releases name that token: a node whose lease ran out and whose recipient
 *   another node took since records nothing over the other's claim.
 * - Leases are never voided at start: another node's may be alive. A dead node's expire.
 */
export function createPgDeliveryRepo(
  pool: PgPool,
  tx: PgCommitter,
  deps: {
    /** Puts an address on the project's suppression list, in the caller's transaction. */
    suppress: (
      t: PgTx,
      projectId: string,
      address: string,
      emailId: string,
      at: string,
      reason: 'HARD_BOUNCE' | 'COMPLAINT',
    ) => Promise<void>;
  },
): DeliveryStore {
  return {
    findDue: async (now, limit) =>
      (
        await pool.query<DueRow>(
          `SELECT id, email_seq, address, domain, attempts, last_error, delay_notified FROM recipients
           WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
           ORDER BY next_attempt_at, email_seq LIMIT $2`,
          [iso(now), limit],
        )
      ).rows,

    // A claim's emails in one statement, and their attachments in one more only when some have any.
    findEmails: async (seqs) => {
      const unique = [...new Set(seqs)];
      const found = await pool.query<ClaimedEmail['row'] & { seq: number; has_attachments?: boolean }>(
        `SELECT e.*, b.html_body, b.text_body, b.raw_message,
                EXISTS (SELECT 1 FROM attachments a WHERE a.email_seq = e.seq) AS has_attachments
         FROM emails e LEFT JOIN email_bodies b ON b.email_seq = e.seq WHERE e.seq = ANY($1::bigint[])`,
        [unique],
      );
      const rows = new Map(found.rows.map(({ has_attachments: _, ...row }) => [row.seq, row]));
      const withFiles = found.rows.filter((r) => r.has_attachments).map((r) => r.seq);
      const files = new Map<number, ClaimedEmail['attachments']>();
      if (withFiles.length > 0) {
        const all = await pool.query<ClaimedEmail['attachments'][number] & { email_seq: number }>(
          `SELECT email_seq, filename, content_type, content, content_id FROM attachments
           WHERE email_seq = ANY($1::bigint[]) ORDER BY email_seq, position`,
          [withFiles],
        );
        for (const { email_seq, ...a } of all.rows) {
          const list = files.get(email_seq);
          if (list) list.push(a);
          else files.set(email_seq, [a]);
        }
      }
      return seqs.map((seq) => ({ seq, row: rows.get(seq)!, attachments: files.get(seq) ?? [] }));
    },

    // Rows another node is claiming at this moment are skipped, not waited for (CLAIM_ROWS).
    claim: (rows, now, leaseMs, stamp) =>
      tx.write(async (t): Promise<LeasedRow[]> => {
        const at = iso(now);
        const lease = randomUUID();
        const got = await t.query<{ id: number }>(CLAIM_ROWS, [rows.map((r) => r.id), at, iso(now + leaseMs), lease]);
        const ids = new Set(got.rows.map((r) => r.id));
        const leased = rows.filter((r) => ids.has(r.id)).map((r) => ({ ...r, lease }));
        // Each claimed email's stamp (Message-ID, DKIM and SPF as signed), in one statement.
        const seqs = new Set(leased.map((r) => r.email_seq));
        // In seq order: two claims that stamp the same emails lock them in the same order.
        const stamps = [...stamp]
          .filter(([seq]) => seqs.has(seq))
          .map(([seq, st]) => ({ seq, ...st }))
          .sort((x, y) => x.seq - y.seq);
        // The emails' status, then their events, in one statement (withEvents). A retry says why
        // the previous attempt did not finish, so the events explain the wait.
        await withEvents(
          t,
          stampsUpdate(stamps),
          leased.map((r): NewEvent => [
            r.email_seq,
            'sending',
            {
              recipient: r.address,
              attempt: r.attempts + 1,
              ...(r.last_error ? { previous_attempt: r.last_error } : {}),
            },
          ]),
          at,
        );
        return leased;
      }),

    record: (seq, projectId, emailId, conn, outcomes, now, lease, spf = null) =>
      tx.write(async (t) => {
        const at = iso(now);
        const writes = outcomes.map((o) => outcomeWrites(o, conn, at));
        const states = writes.map((w) => w.state);
        const { set, all } = await setRecipients(t, seq, outcomes, states, lease, at, conn);
        const events: NewEvent[] = [];
        for (const [i, o] of outcomes.entries()) {
          if (!set.has(o.recipient_id)) continue;
          for (const [type, data] of writes[i]!.events) events.push([seq, type, data]);
          if (writes[i]!.suppress)
            await deps.suppress(t, projectId, o.address.toLowerCase(), emailId, at, 'HARD_BOUNCE');
        }
        // setRecipients locked the email's row.
        if (set.size > 0) await refreshEmail(t, seq, at, events, { locked: true, spf, known: all });
        return set.size;
      }),

    renew: (ids, lease, until) =>
      tx.write(async (t) => {
        await t.query('UPDATE recipients SET lease_until = $3 WHERE id = ANY($1::bigint[]) AND lease_token = $2', [
          ids,
          lease,
          iso(until),
        ]);
      }),
    release: (ids, lease) =>
      tx.write(async (t) => {
        await t.query(
          `UPDATE recipients SET lease_until = NULL, lease_token = NULL, status = 'QUEUED',
             attempts = greatest(attempts - 1, 0)
           WHERE id = ANY($1::bigint[]) AND status = 'SENDING' AND lease_token = $2`,
          [ids, lease],
        );
      }),

    // Several nodes: a lease at start may be a live node's, so none is voided (SQLite's single
    // server voids them all). A dead node's leases expire, and its recipients become due again.
    releaseStaleLeases: () => Promise.resolve(0),

    queueStats: async () => (await pool.query<QueueStats>(QUEUE_STATS_SQL)).rows[0]!,

    throttledNow: async () =>
      (
        await pool.query<SharedThrottle>(
          'SELECT domain, concurrency, paused_until, updated_at FROM destination_throttles ORDER BY domain COLLATE "C"',
        )
      ).rows,

    findRecipient: async (seq, address) =>
      (
        await pool.query<FoundRecipient>(
          'SELECT id, address, status FROM recipients WHERE email_seq = $1 AND address_lc = $2',
          [seq, address.toLowerCase()],
        )
      ).rows[0],

    recordLateBounce: (r, d, source, now) =>
      tx.write(async (t) => {
        const at = iso(now);
        const { reply, detail, rule, event } = lateBounceWrite(r.address, d, source);
        // The MX host and the time it was sent stay as they were.
        const changed = await t.query(
          `UPDATE recipients SET status = 'BOUNCED', bounce_type = $2, bounce_category = $3, smtp_code = $4,
             smtp_enhanced = $5, smtp_text = $6, last_error = $7, delivered_at = NULL, updated_at = $8, bounce_rule = $9
           WHERE id = $1 AND status IN ('SENT', 'DELIVERED')`,
          [r.recipientId, d.bounce_type, d.category, reply.code, reply.enhanced, reply.text, detail, at, rule],
        );
        if (!changed.rowCount) return false;
        await refreshEmail(t, r.seq, at, [[r.seq, 'bounced', event]]);
        if (d.suppress) await deps.suppress(t, r.projectId, r.address.toLowerCase(), r.emailId, at, 'HARD_BOUNCE');
        return true;
      }),

    recordComplaint: (r, feedbackType, source, now) =>
      tx.write(async (t) => {
        const at = iso(now);
        const changed = await t.query(
          "UPDATE recipients SET status = 'COMPLAINED', updated_at = $2 WHERE id = $1 AND status = 'DELIVERED'",
          [r.recipientId, at],
        );
        if (!changed.rowCount) return false;
        await refreshEmail(t, r.seq, at, [
          [r.seq, 'complained', { recipient: r.address, feedback_type: feedbackType, source }],
        ]);
        await deps.suppress(t, r.projectId, r.address.toLowerCase(), r.emailId, at, 'COMPLAINT');
        return true;
      }),

    explain: async (emailId) => (await pool.query<QueueRecipient>(PG_EXPLAIN_SQL, [emailId])).rows,

    saveStsPolicy: (p) =>
      tx.write(async (t) => {
        await t.query(
          `INSERT INTO mta_sts_policies (domain, policy_id, mode, mx, max_age, fetched_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (domain) DO UPDATE SET policy_id = excluded.policy_id, mode = excluded.mode, mx = excluded.mx,
             max_age = excluded.max_age, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
          [p.domain, p.policy_id, p.mode, JSON.stringify(p.mx), p.max_age, p.fetched_at, p.expires_at],
        );
      }),
    stsPolicies: async (now) =>
      (
        await pool.query<Omit<StoredStsPolicy, 'mx'> & { mx: string }>(
          `SELECT domain, policy_id, mode, mx, max_age, fetched_at, expires_at FROM mta_sts_policies
           WHERE expires_at > $1 ORDER BY domain COLLATE "C"`,
          [iso(now)],
        )
      ).rows.map((r) => ({ ...r, mx: JSON.parse(r.mx) as string[] })),
    saveThrottle: (domain, state, now) =>
      tx.write(async (t) => {
        if (!state) await t.query('DELETE FROM destination_throttles WHERE domain = $1', [domain]);
        else {
          await t.query(
            `INSERT INTO destination_throttles (domain, concurrency, paused_until, reason, updated_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (domain) DO UPDATE SET concurrency = excluded.concurrency,
               paused_until = excluded.paused_until, reason = excluded.reason, updated_at = excluded.updated_at`,
            [domain, state.concurrency, state.paused_until, state.reason, iso(now)],
          );
        }
      }),
  };
}
