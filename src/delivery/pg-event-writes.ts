// The writes of the PostgreSQL delivery store (repo-pg.ts) that carry an email's events with
// them: each statement is a round trip, so the events ride in the statement that changes their
// emails, and their triggers see that change (outcome-writes.ts, "status, then events").
import { newId } from '../lib/ids.ts';
import type { PgTx } from '../store/pg-committer.ts';
import type { Stamp } from './store.ts';

/** An event to write with others in one statement (each statement is a round trip). */
export type NewEvent = [seq: number, type: string, data: object];
/**
 * The INSERT of `events`, in their order: its text and its parameters, numbered from `$from`.
 * The webhook outbox's trigger runs at the end of the whole statement (once per statement,
 * migration 0023): as a part of a `WITH`, it sees what the other parts changed (the email's
 * status). The stats rollup's runs at COMMIT.
 */
export const eventsInsert = (events: NewEvent[], at: string, from: number) => {
  const stamp = Date.parse(at);
  const [ids, seqs, types, data, when] = [from, from + 1, from + 2, from + 3, from + 4].map((n) => `$${n}`);
  return {
    sql: `INSERT INTO email_events (id, email_seq, type, data, created_at)
      SELECT id, seq, type, data, ${when} FROM unnest(${ids}::text[], ${seqs}::bigint[], ${types}::text[], ${data}::text[])
      AS e(id, seq, type, data)`,
    params: [
      events.map(() => newId(stamp)),
      events.map((e) => e[0]),
      events.map((e) => e[1]),
      events.map((e) => JSON.stringify(e[2])),
      at,
    ],
  };
};
/**
 * Runs `statement` (a change to the events' emails, or none), then writes `events` in their
 * order, in one round trip: the events ride in the statement's `WITH`, and their triggers see
 * its change (outcome-writes.ts, "status, then events").
 */
export const withEvents = async (
  t: PgTx,
  statement: { sql: string; params: unknown[] } | null,
  events: NewEvent[],
  at: string,
): Promise<void> => {
  if (events.length === 0) {
    if (statement) await t.query(statement.sql, statement.params);
    return;
  }
  const insert = eventsInsert(events, at, (statement?.params.length ?? 0) + 1);
  if (!statement) await t.query(insert.sql, insert.params);
  else await t.query(`WITH ev AS (${insert.sql}) ${statement.sql}`, [...statement.params, ...insert.params]);
};

/**
 * The UPDATE that stamps claimed emails SENDING with their Message-ID, DKIM and SPF as signed; none
 * for none. The emails are found by seq alone: `(… IN …) IS TRUE` is no condition
 * emails_project_status can serve (repo-pg.ts, CLAIM_ROWS, says why). On the statistics of a
 * mostly delivered table, PostgreSQL read every QUEUED and SENDING email through that index and
 * matched each against the stamps: 835 emails and 20,016 comparisons for 24 stamps, 24 ms.
 */
export function stampsUpdate(stamps: (Stamp & { seq: number })[]): { sql: string; params: unknown[] } | null {
  if (stamps.length === 0) return null;
  return {
    sql: `UPDATE emails e SET status = 'SENDING', message_id = coalesce(e.message_id, u.message_id), dkim_d = u.d,
       dkim_selector = u.s, dkim_signing_status = u.signing, dkim_aligned = u.aligned, spf_domain = u.spf,
       spf_aligned = u.spf_aligned, dmarc_aligned = u.aligned
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[])
            AS u(seq, message_id, d, s, signing, aligned, spf, spf_aligned)
     WHERE e.seq = u.seq AND (e.status IN ('QUEUED', 'SENDING')) IS TRUE`,
    params: [
      stamps.map((x) => x.seq),
      stamps.map((x) => x.message_id),
      stamps.map((x) => x.dkim?.d ?? null),
      stamps.map((x) => x.dkim?.s ?? null),
      stamps.map((x) => (x.dkim ? 'expected' : 'not_signed')),
      // d= is the From domain, so DKIM aligns (and DMARC passes on it) whenever we sign.
      stamps.map((x) => (x.dkim ? 1 : 0)),
      stamps.map((x) => x.spf_domain),
      // Known once a message left: record() writes SPF evaluated for the address it left from.
      stamps.map(() => null),
    ],
  };
}
