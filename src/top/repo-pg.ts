import type { Clock } from '../lib/clock.ts';
import { QUEUE_STATS_SQL, type QueueRecipient } from '../delivery/index.ts';
import { PG_EXPLAIN_SQL } from '../delivery/index.ts';
import type { NodeRow } from '../nodes/index.ts';
import type { QueryResultRow } from 'pg';
import type { PgPool } from '../store/pg.ts';
import type { TopFilter } from './filter.ts';
import type { LatestEmail } from './schema.ts';
import type { NewEvents, TopData, TopStore } from './store.ts';
import { createTopView, DELIVERY_SCAN, EVENT_SCAN, LATEST } from './view.ts';

/**
 * svc top's store on PostgreSQL (store.ts): the SQLite reader's reads (repo.ts), for the whole server or one
 * project, under the same view (view.ts).
 *
 * Each reading adds the events above the last seq it read, and those it found missing below
 * it before: a transaction (another group, another node) can commit a lower seq after a
 * higher one was read. It reads them in one REPEATABLE READ snapshot, so that what it counts
 * and what it finds missing agree.
 */
export function createPgTopReader(pool: PgPool, opts: { clock?: Clock; projectId?: string } = {}): TopStore {
  return createTopView(pgTopData(pool, opts.projectId ?? null), { clock: opts.clock, projectId: opts.projectId });
}

type Query = <T extends object>(sql: string, params?: unknown[]) => Promise<T[]>;

/** `read` in one REPEATABLE READ, read-only transaction: every statement sees the same commits. */
async function inSnapshot<T>(pool: PgPool, read: (q: Query) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const query: Query = async <R extends object>(sql: string, params?: unknown[]) =>
      (await client.query<R & QueryResultRow>(sql, params)).rows;
    const result = await read(query);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

/** `table`'s newest seq (the tables svc top follows: email_events, webhook_deliveries). */
const maxSeq = async (q: Query, table: string) =>
  Number((await q<{ m: number | null }>(`SELECT max(seq) AS m FROM ${table}`))[0]!.m ?? 0);

/**
 * The seqs of `table` in (after, upto], and of `late`, that are not there: the holes between
 * the seqs present (found from each row's predecessor), and the late ones still absent. The
 * newest 10,000 at most: the seqs of open transactions are near the top.
 */
async function missingSeqs(q: Query, table: string, after: number, upto: number, late: number[]): Promise<number[]> {
  const found = await q<{ s: number }>(
    `SELECT s FROM (
       SELECT g.s FROM (
         SELECT seq, lag(seq, 1, $1::bigint) OVER (ORDER BY seq) AS prev FROM ${table} WHERE seq > $1 AND seq <= $2
       ) x CROSS JOIN LATERAL generate_series(x.prev + 1, x.seq - 1) AS g(s)
       WHERE x.seq > x.prev + 1
       UNION ALL
       SELECT s FROM unnest($3::bigint[]) AS l(s) WHERE NOT EXISTS (SELECT 1 FROM ${table} t WHERE t.seq = l.s)
     ) m ORDER BY s DESC LIMIT 10000`,
    [after, upto, late],
  );
  return found.map((r) => Number(r.s));
}

function pgTopData(pool: PgPool, project: string | null): TopData {
  const rows = async <T extends object>(sql: string, params: unknown[] = []) => (await pool.query<T>(sql, params)).rows;
  const one = async <T extends object>(sql: string, params: unknown[] = []) => (await rows<T>(sql, params))[0]!;
  // `$1` is the project in every scoped read; whole-server reads pass none.
  const p = project === null ? [] : [project];
  const scoped = (col: string) => (project === null ? 'true' : `${col} = $1`);
  const n = project === null ? 0 : 1;
  const at = (i: number) => `$${n + i}`;
  return {
    newEvents: (from, late) =>
      inSnapshot(pool, async (q) => {
        const upto = await maxSeq(q, 'email_events');
        const after = from ?? Math.max(0, upto - EVENT_SCAN);
        if (upto <= after && late.length === 0) return { upto, rows: { events: [], settled: [] }, missing: [] };
        // The new range, and the seqs missing before that have come since.
        const which = `(ev.seq > ${at(1)} AND ev.seq <= ${at(2)} OR ev.seq = ANY(${at(3)}::bigint[]))`;
        const params = [...p, after, upto, late];
        const join = project === null ? '' : 'JOIN emails e ON e.seq = ev.email_seq';
        const events = await q<NewEvents['events'][number]>(
          `SELECT substr(ev.created_at, 1, 19) AS second, ev.type, count(*)::int AS n
           FROM email_events ev ${join} WHERE ${which} AND ${scoped('e.project_id')} GROUP BY 1, 2`,
          params,
        );
        const settled = await q<NewEvents['settled'][number]>(
          `SELECT second, type, lower(substr(r, strpos(r, '@') + 1)) AS domain, count(*)::int AS n FROM (
             SELECT substr(ev.created_at, 1, 19) AS second, ev.type, ev.data::jsonb ->> 'recipient' AS r
             FROM email_events ev ${join}
             WHERE ${which} AND ev.type IN ('delivered', 'bounced', 'failed') AND ${scoped('e.project_id')}) s
           GROUP BY 1, 2, 3`,
          params,
        );
        return { upto, rows: { events, settled }, missing: await missingSeqs(q, 'email_events', after, upto, late) };
      }),
    hour: (h) =>
      rows(
        // Not the bounces by category (`bounced:<category>`, migration 13): the events by type only.
        `SELECT type, sum(count)::bigint AS n FROM email_stats
         WHERE project_id IN (SELECT id FROM projects WHERE ${scoped('id')}) AND bucket_hour = ${at(1)}
           AND type NOT LIKE 'bounced:%' GROUP BY type`,
        [...p, h],
      ),
    queue: () => one(project === null ? QUEUE_STATS_SQL : `${QUEUE_STATS_SQL} AND r.project_id = $1`, p),
    waiting: () =>
      rows(
        `SELECT domain, count(*) AS waiting, count(*) FILTER (WHERE attempts > 0) AS deferred FROM recipients
         WHERE next_attempt_at IS NOT NULL AND ${scoped('project_id')} GROUP BY domain`,
        p,
      ),
    throttles: () => rows('SELECT domain, concurrency, paused_until, reason FROM destination_throttles'),
    stsModes: (at) => rows('SELECT domain, mode FROM mta_sts_policies WHERE expires_at > $1', [at]),
    projects: async () =>
      (await rows<{ id: string }>(`SELECT id FROM projects WHERE ${scoped('id')}`, p)).map((r) => r.id),
    latest: async (projectId: string, f: TopFilter) => {
      const params: unknown[] = [projectId];
      const where = ['e.project_id = $1'];
      if (f.status) where.push(`e.status = $${params.push(f.status)}`);
      if (f.to_email) {
        where.push(
          `e.seq IN (SELECT email_seq FROM recipients WHERE project_id = $1 AND address_lc = $${params.push(f.to_email.toLowerCase())})`,
        );
      }
      if (f.tag) {
        where.push(
          `e.seq IN (SELECT email_seq FROM email_tags WHERE project_id = $1 AND tag = $${params.push(f.tag)})`,
        );
      }
      const found = await rows<Omit<LatestEmail, 'to'> & { seq: number; to_emails: string }>(
        `SELECT e.seq, e.id, e.status, e.from_email, e.to_emails, e.subject, e.created_at FROM emails e
         WHERE ${where.join(' AND ')} ORDER BY e.seq DESC LIMIT ${LATEST}`,
        params,
      );
      return found.map(({ to_emails, ...e }) => ({ ...e, to: JSON.parse(to_emails) as string[] }));
    },
    pendingWebhookEvents: async () =>
      (
        await one<{ n: number }>(
          `SELECT count(*) AS n FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
           WHERE o.skip = 0 AND ${scoped('w.project_id')}`,
          p,
        )
      ).n,
    autoDisabledWebhooks: () =>
      rows(
        `SELECT id, url FROM webhooks WHERE auto_disabled = 1 AND ${scoped('project_id')} ORDER BY id COLLATE "C"`,
        p,
      ),
    newFailures: (from, late) =>
      inSnapshot(pool, async (q) => {
        const upto = await maxSeq(q, 'webhook_deliveries');
        const after = from ?? Math.max(0, upto - DELIVERY_SCAN);
        if (upto <= after && late.length === 0) return { upto, rows: [], missing: [] };
        const failures = await q<{ minute: string; n: number }>(
          `SELECT substr(d.created_at, 1, 16) AS minute, count(*)::int AS n
           FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE (d.seq > ${at(1)} AND d.seq <= ${at(2)} OR d.seq = ANY(${at(3)}::bigint[]))
             AND d.status = 'failed' AND ${scoped('w.project_id')} GROUP BY 1`,
          [...p, after, upto, late],
        );
        return { upto, rows: failures, missing: await missingSeqs(q, 'webhook_deliveries', after, upto, late) };
      }),
    nodes: (since) => rows<NodeRow>('SELECT * FROM nodes WHERE seen_at >= $1 ORDER BY id COLLATE "C"', [since]),
    email: async (id) =>
      (
        await rows<{ id: string; status: string; project_id: string }>(
          'SELECT id, status, project_id FROM emails WHERE id = $1',
          [id],
        )
      )[0],
    explain: (id) => rows<QueueRecipient>(PG_EXPLAIN_SQL, [id]),
    emailEvents: (id) =>
      rows(
        `SELECT ev.type, ev.created_at, ev.data FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
         WHERE e.id = $1 ORDER BY ev.seq`,
        [id],
      ),
  };
}
