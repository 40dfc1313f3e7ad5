import type { Clock } from '../lib/clock.ts';
import { QUEUE_STATS_SQL, type QueueRecipient } from '../delivery/repo.ts';
import { PG_EXPLAIN_SQL } from '../delivery/repo-pg.ts';
import type { NodeRow } from '../nodes/repo.ts';
import type { PgPool } from '../store/pg.ts';
import type { TopFilter } from './filter.ts';
import type { LatestEmail } from './schema.ts';
import { createTopView, LATEST, type TopData } from './view.ts';

/**
 * `svc top` on PostgreSQL: the SQLite reader's reads (repo.ts), for the whole server or one
 * project, under the same view (view.ts).
 *
 * Known limit: each reading counts the events whose seq is above the last one it saw. On
 * PostgreSQL a transaction can commit a lower seq after a higher one, so an event that commits
 * late is missing from the last minute's per-second counts. The hourly rollup is exact.
 */
export function createPgTopReader(pool: PgPool, opts: { clock?: Clock; projectId?: string } = {}) {
  return createTopView(pgTopData(pool, opts.projectId ?? null), { clock: opts.clock, projectId: opts.projectId });
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
    maxSeq: async () => (await one<{ m: number | null }>('SELECT max(seq) AS m FROM email_events')).m ?? 0,
    events: (after, upto) =>
      rows(
        `SELECT substr(ev.created_at, 1, 19) AS second, ev.type, count(*) AS n
         FROM email_events ev ${project === null ? '' : 'JOIN emails e ON e.seq = ev.email_seq'}
         WHERE ev.seq > ${at(1)} AND ev.seq <= ${at(2)} AND ${scoped('e.project_id')} GROUP BY 1, 2`,
        [...p, after, upto],
      ),
    settled: (after, upto) =>
      rows(
        `SELECT second, type, lower(substr(r, strpos(r, '@') + 1)) AS domain, count(*) AS n FROM (
           SELECT substr(ev.created_at, 1, 19) AS second, ev.type, ev.data::jsonb ->> 'recipient' AS r
           FROM email_events ev ${project === null ? '' : 'JOIN emails e ON e.seq = ev.email_seq'}
           WHERE ev.seq > ${at(1)} AND ev.seq <= ${at(2)} AND ev.type IN ('delivered', 'bounced', 'failed')
             AND ${scoped('e.project_id')}) s
         GROUP BY 1, 2, 3`,
        [...p, after, upto],
      ),
    hour: (h) =>
      rows(
        `SELECT type, sum(count)::bigint AS n FROM email_stats
         WHERE project_id IN (SELECT id FROM projects WHERE ${scoped('id')}) AND bucket_hour = ${at(1)} GROUP BY type`,
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
    maxDeliverySeq: async () =>
      (await one<{ m: number | null }>('SELECT max(seq) AS m FROM webhook_deliveries')).m ?? 0,
    failures: (after, upto) =>
      rows(
        `SELECT substr(d.created_at, 1, 16) AS minute, count(*) AS n
         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.seq > ${at(1)} AND d.seq <= ${at(2)} AND d.status = 'failed' AND ${scoped('w.project_id')} GROUP BY 1`,
        [...p, after, upto],
      ),
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
