import type { Clock } from '../lib/clock.ts';
import type { Db } from '../store/db.ts';
import { EXPLAIN_SQL, QUEUE_STATS_SQL, type QueueRecipient } from '../delivery/index.ts';
import { FRESH_NODES_SQL, type NodeRow } from '../nodes/index.ts';
import type { TopFilter } from './filter.ts';
import type { Destination, EmailDetail, LatestEmail, Snapshot } from './schema.ts';
import type { TopData, TopStore } from './store.ts';
import { createTopView, DELIVERY_SCAN, EVENT_SCAN, LATEST } from './view.ts';

export type { Destination, EmailDetail, LatestEmail, Snapshot };

/**
 * svc top's store on SQLite (store.ts): its TopData under the view (view.ts) PostgreSQL's
 * (repo-pg.ts) shares. On the data dir it reads the whole server through a read-only connection (openReadOnly):
 * a server writing beside it is never blocked (WAL), and nothing is written. Through
 * `GET /v1/top` it reads one project (`projectId`) on the server's own connection. Each
 * reading adds only the events written since the one before, counted by SQLite (grouped by
 * second and type).
 */
export function createTopReader(db: Db, opts: { clock?: Clock; projectId?: string } = {}): TopStore {
  return createTopView(sqliteTopData(db, opts.projectId ?? null), { clock: opts.clock, projectId: opts.projectId });
}

function sqliteTopData(db: Db, project: string | null): TopData {
  const scoped = (col: string) => (project === null ? '1' : `${col} = +@project`);
  // The project's filter on a reading that walks a bounded range (the events since the last
  // reading, the queue's due rows): with `+` on the column no index of the project serves it,
  // so the planner walks that range, not every email or recipient the project ever had
  // (a project of 200,000 recipients: 57 ms a reading through its index, 0.05 ms this way).
  const within = (col: string) => (project === null ? '1' : `+${col} = +@project`);
  const args = project === null ? {} : { project };

  const maxSeq = db.prepare<[], number | null>('SELECT max(seq) FROM email_events').pluck();
  const events = db.prepare<Record<string, unknown>, { second: string; type: string; n: number }>(
    project === null
      ? `SELECT substr(created_at, 1, 19) AS second, type, count(*) AS n FROM email_events
         WHERE seq > +@after AND seq <= +@upto GROUP BY 1, 2`
      : `SELECT substr(ev.created_at, 1, 19) AS second, ev.type, count(*) AS n
         FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
         WHERE ev.seq > +@after AND ev.seq <= +@upto AND ${within('e.project_id')} GROUP BY 1, 2`,
  );
  // The recipient's domain of the events that settle a recipient (data.recipient).
  const settled = db.prepare<Record<string, unknown>, { second: string; type: string; domain: string; n: number }>(
    `SELECT second, type, lower(substr(r, instr(r, '@') + 1)) AS domain, count(*) AS n FROM (
       SELECT substr(ev.created_at, 1, 19) AS second, ev.type, json_extract(ev.data, '$.recipient') AS r
       FROM email_events ev ${project === null ? '' : 'JOIN emails e ON e.seq = ev.email_seq'}
       WHERE ev.seq > +@after AND ev.seq <= +@upto AND (ev.type = 'delivered' OR ev.type = 'bounced' OR ev.type = 'failed')
         AND ${within('e.project_id')})
     GROUP BY 1, 2, 3`,
  );
  const hour = db.prepare<Record<string, unknown>, { type: string; n: number }>(
    // project_id leads the rollup's primary key: IN (every project) lets the whole-server read use it too.
    // Not the bounces by category (`bounced:<category>`, migration 0025): the events by type only.
    `SELECT type, sum(count) AS n FROM email_stats
     WHERE project_id IN (SELECT id FROM projects WHERE ${scoped('id')}) AND bucket_hour = +@hour
       AND type NOT LIKE 'bounced:%' GROUP BY type`,
  );
  const queue = db.prepare<Record<string, unknown>, { recipients: number; oldest: string | null }>(
    `${QUEUE_STATS_SQL} AND ${within('r.project_id')}`,
  );
  const waiting = db.prepare<Record<string, unknown>, { domain: string; waiting: number; deferred: number }>(
    `SELECT domain, count(*) AS waiting, sum(attempts > 0) AS deferred FROM recipients
     WHERE next_attempt_at IS NOT NULL AND ${within('project_id')} GROUP BY domain`,
  );
  const throttles = db.prepare<
    [],
    { domain: string; concurrency: number; paused_until: string | null; reason: string | null }
  >('SELECT domain, concurrency, paused_until, reason FROM destination_throttles');
  const stsModes = db.prepare<[string], { domain: string; mode: string }>(
    'SELECT domain, mode FROM mta_sts_policies WHERE expires_at > ?',
  );
  const projects = db.prepare<Record<string, unknown>, string>(`SELECT id FROM projects WHERE ${scoped('id')}`).pluck();
  const pending = db.prepare<Record<string, unknown>, { n: number }>(
    `SELECT count(*) AS n FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
     WHERE o.skip = 0 AND ${scoped('w.project_id')}`,
  );
  const disabled = db.prepare<Record<string, unknown>, { id: string; url: string }>(
    `SELECT id, url FROM webhooks WHERE auto_disabled = 1 AND ${scoped('project_id')} ORDER BY id`,
  );
  const maxDelivery = db.prepare<[], number | null>('SELECT max(seq) FROM webhook_deliveries').pluck();
  const failures = db.prepare<Record<string, unknown>, { minute: string; n: number }>(
    `SELECT substr(d.created_at, 1, 16) AS minute, count(*) AS n
     FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.seq > +@after AND d.seq <= +@upto AND d.status = 'failed' AND ${scoped('w.project_id')} GROUP BY 1`,
  );
  const nodes = db.prepare<[string], NodeRow>(FRESH_NODES_SQL);
  const emailOf = db.prepare<[string], { id: string; status: string; project_id: string }>(
    'SELECT id, status, project_id FROM emails WHERE id = ?',
  );
  const explain = db.prepare<[string], QueueRecipient>(EXPLAIN_SQL);
  const emailEvents = db.prepare<[string], { type: string; created_at: string; data: string }>(
    `SELECT ev.type, ev.created_at, ev.data FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
     WHERE e.id = +? ORDER BY ev.seq`,
  );
  const latestSql = new Map<string, ReturnType<Db['prepare']>>();

  /** The newest emails of one project that pass the filter (the same reading as GET /v1/emails). */
  function latestOf(projectId: string, f: TopFilter): (LatestEmail & { seq: number })[] {
    const shape = `${f.status ? 's' : ''}${f.to_email ? 'a' : ''}${f.tag ? 't' : ''}`;
    let stmt = latestSql.get(shape);
    if (!stmt) {
      const where = ['e.project_id = +@p'];
      if (f.status) where.push('e.status = +@status');
      if (f.to_email)
        where.push('e.seq IN (SELECT email_seq FROM recipients WHERE project_id = +@p AND address_lc = +@to)');
      if (f.tag) where.push('e.seq IN (SELECT email_seq FROM email_tags WHERE project_id = +@p AND tag = +@tag)');
      stmt = db.prepare(
        `SELECT e.seq, e.id, e.status, e.from_email, e.to_emails, e.subject, e.created_at FROM emails e
         WHERE ${where.join(' AND ')} ORDER BY e.seq DESC LIMIT ${LATEST}`,
      );
      latestSql.set(shape, stmt);
    }
    const params: Record<string, unknown> = { p: projectId };
    if (f.status) params.status = f.status;
    if (f.to_email) params.to = f.to_email.toLowerCase();
    if (f.tag) params.tag = f.tag;
    return (stmt.all(params) as (Omit<LatestEmail, 'to'> & { seq: number; to_emails: string })[]).map(
      ({ to_emails, ...e }) => ({ ...e, to: JSON.parse(to_emails) as string[] }),
    );
  }

  const now = <T>(v: T) => Promise.resolve(v);
  return {
    // One writer commits seqs in order: nothing below the newest is still to come (`late` stays empty).
    newEvents: (from) => {
      const upto = maxSeq.get() ?? 0;
      const after = from ?? Math.max(0, upto - EVENT_SCAN);
      if (upto <= after) return now({ upto, rows: { events: [], settled: [] }, missing: [] });
      const range = { ...args, after, upto };
      return now({ upto, rows: { events: events.all(range), settled: settled.all(range) }, missing: [] });
    },
    newFailures: (from) => {
      const upto = maxDelivery.get() ?? 0;
      const after = from ?? Math.max(0, upto - DELIVERY_SCAN);
      return now({ upto, rows: upto > after ? failures.all({ ...args, after, upto }) : [], missing: [] });
    },
    hour: (h) => now(hour.all({ ...args, hour: h })),
    queue: () => now(queue.get(args)!),
    waiting: () => now(waiting.all(args)),
    throttles: () => now(throttles.all()),
    stsModes: (at) => now(stsModes.all(at)),
    projects: () => now(projects.all(args)),
    latest: (projectId, f) => now(latestOf(projectId, f)),
    pendingWebhookEvents: () => now(pending.get(args)!.n),
    autoDisabledWebhooks: () => now(disabled.all(args)),
    nodes: (since) => now(nodes.all(since)),
    email: (id) => now(emailOf.get(id)),
    explain: (id) => now(explain.all(id)),
    emailEvents: (id) => now(emailEvents.all(id)),
  };
}
