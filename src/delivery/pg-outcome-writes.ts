// What an outcome writes on PostgreSQL: the recipients' new states under the claim's token, then
// the email's status summed up from them with its events, each in one statement (repo-pg.ts).
import type { PgTx } from '../store/pg-committer.ts';
import type { ConnectionInfo } from './job.ts';
import { summarize, type RecipientState } from './status.ts';
import type { OutcomeState } from './outcome-writes.ts';
import { withEvents, type NewEvent } from './pg-event-writes.ts';
import type { SpfFields } from './spf-verdict.ts';
import type { RecipientOutcome } from './store.ts';

/** A recipient's columns that its email's status is summed up from (status.ts RecipientState). */
const RECIPIENT_STATE_COLUMNS = [
  'status',
  'bounce_type',
  'bounce_category',
  'bounce_rule',
  'smtp_code',
  'smtp_enhanced',
  'smtp_text',
  'sent_at',
  'delivered_at',
  'updated_at',
] as const satisfies readonly (keyof RecipientState)[];
const recipientState = (alias: string) => RECIPIENT_STATE_COLUMNS.map((c) => `${alias}.${c}`).join(', ');

/**
 * The email's status from its recipients, then `events`, in one statement (withEvents): one
 * round trip per recorded outcome instead of two. With `spf`, the SPF verdict of the address
 * the message left from goes in the same statement too.
 */
export async function refreshEmail(
  t: PgTx,
  seq: number,
  now: string,
  events: NewEvent[],
  opts: { locked: boolean; spf?: SpfFields | null; known?: RecipientState[] | null } = { locked: false },
): Promise<void> {
  // The email's row first (unless the caller's statement locked it): two transactions
  // recording different recipients of one email (two groups, or two nodes) would each read
  // the other's recipient as it was before, and leave the email SENDING with every recipient
  // final. Locked, the second waits for the first's commit, and its read of the recipients (a
  // new snapshot, under READ COMMITTED) sees it.
  if (!opts.locked) await t.query('SELECT 1 FROM emails WHERE seq = $1 FOR NO KEY UPDATE', [seq]);
  const rows =
    opts.known ??
    (
      await t.query<RecipientState>(
        `SELECT ${recipientState('recipients')} FROM recipients WHERE email_seq = $1 ORDER BY id`,
        [seq],
      )
    ).rows;
  const s = summarize(rows, now);
  const spf = opts.spf ? [opts.spf.spf_aligned ? 1 : 0, opts.spf.spf_authorized_ip ? 1 : 0] : null;
  const update = s
    ? {
        sql: `UPDATE emails SET status = $2, sent_at = $3, delivered_at = $4, failed_at = $5, bounce_type = $6,
       bounce_category = $7, final_smtp_code = $8, final_smtp_enhanced = $9, final_smtp_text = $10,
       bounce_rule = $11, spf_aligned = coalesce($12, spf_aligned), spf_authorized_ip = coalesce($13, spf_authorized_ip)
     WHERE seq = $1`,
        params: [
          seq,
          s.status,
          s.sent_at,
          s.delivered_at,
          s.failed_at,
          s.bounce_type,
          s.bounce_category,
          s.final_smtp_code,
          s.final_smtp_enhanced,
          s.final_smtp_text,
          s.bounce_rule,
          spf?.[0] ?? null,
          spf?.[1] ?? null,
        ],
      }
    : spf && {
        sql: 'UPDATE emails SET spf_aligned = $2, spf_authorized_ip = $3 WHERE seq = $1',
        params: [seq, ...spf],
      };
  await withEvents(t, update, events, now);
}

/**
 * The outcomes' recipients set to their new states in one statement, under the claim's token;
 * the ids it set (a recipient another claim took since is left alone). The same statement
 * locks the email's row, so that the read of its recipients after it sees every recipient
 * another transaction recorded before (refreshEmail).
 *
 * `all`: when the statement set every recipient of the email (one destination, the usual
 * case), their states as it wrote them, in id order, so refreshEmail need not read them again.
 * They are current: this transaction holds their rows, and the email's. The count of the
 * email's recipients never changes after its acceptance, so the statement's snapshot has it right.
 */
export async function setRecipients(
  t: PgTx,
  seq: number,
  outcomes: RecipientOutcome[],
  states: OutcomeState[],
  lease: string,
  at: string,
  conn: ConnectionInfo | null,
): Promise<{ set: Set<number>; all: RecipientState[] | null }> {
  const col = <K extends keyof OutcomeState>(k: K) => states.map((s) => s[k]);
  const reply = (k: 'code' | 'enhanced' | 'text') => outcomes.map((o) => o.decision.reply?.[k] ?? null);
  const r = await t.query<RecipientState & { id: number; total: number }>(
    `UPDATE recipients r SET status = u.status, next_attempt_at = u.next, lease_until = NULL, lease_token = NULL,
       last_error = u.detail, smtp_code = u.code, smtp_enhanced = u.enhanced, smtp_text = u.text, mx_host = $3,
       bounce_type = u.bounce_type, bounce_category = u.category, bounce_rule = u.rule,
       sent_at = coalesce(r.sent_at, u.sent_at), delivered_at = u.delivered_at, delay_notified = u.delay_notified,
       updated_at = $4
     FROM unnest($5::bigint[], $6::text[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::text[],
                 $13::text[], $14::text[], $15::text[], $16::text[], $17::int[])
            AS u(id, status, next, detail, code, enhanced, text, bounce_type, category, sent_at, delivered_at, rule,
                 delay_notified),
          (SELECT seq FROM emails WHERE seq = $1 FOR NO KEY UPDATE) AS locked
     WHERE r.id = u.id AND r.email_seq = locked.seq AND r.lease_token = $2
     RETURNING r.id, ${recipientState('r')},
       (SELECT count(*) FROM recipients x WHERE x.email_seq = $1) AS total`,
    [
      seq,
      lease,
      conn?.mx_host ?? null,
      at,
      outcomes.map((o) => o.recipient_id),
      col('status'),
      col('next'),
      outcomes.map((o) => o.detail),
      reply('code'),
      reply('enhanced'),
      reply('text'),
      col('bounce_type'),
      col('category'),
      col('sent_at'),
      col('delivered_at'),
      col('rule'),
      col('delay_notified'),
    ],
  );
  const set = new Set(r.rows.map((x) => Number(x.id)));
  const covered = r.rows.length > 0 && r.rows.length === Number(r.rows[0]!.total);
  const all = covered ? r.rows.sort((x, y) => x.id - y.id).map(({ id: _, total: __, ...state }) => state) : null;
  return { set, all };
}
