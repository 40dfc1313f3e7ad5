import { systemClock, type Clock } from '../lib/clock.ts';
import type { Db } from '../store/db.ts';
import { EXPLAIN_SQL, QUEUE_STATS_SQL, waitingLine, type QueueRecipient } from '../delivery/repo.ts';
import { FRESH_NODES_SQL, type NodeRow } from '../nodes/repo.ts';
import { NODE_STALE_MS } from '../nodes/heartbeat.ts';
import type { TopFilter } from './filter.ts';
import type { Destination, EmailDetail, LatestEmail, Snapshot } from './schema.ts';

export type { Destination, EmailDetail, LatestEmail, Snapshot };

/** Events read back from the newest at the first reading: bounds the cost on a busy server. */
const EVENT_SCAN = 200_000;
/** Webhook attempt records read back at the first reading. */
const DELIVERY_SCAN = 100_000;
const LATEST = 10;
const DESTINATIONS = 10;

const byType = (rows: { type: string; n: number }[]) => Object.fromEntries(rows.map((r) => [r.type, r.n]));
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);
/** Epoch second of a stored time's first 19 characters (YYYY-MM-DDTHH:MM:SS, UTC). */
const secondOf = (s: string) => Date.parse(`${s}Z`) / 1000;
const add = <K>(m: Map<K, number>, k: K, n: number) => m.set(k, (m.get(k) ?? 0) + n);

/**
 * A read that may cost more on a big store (the queue's scans): taken at every reading
 * while it is cheap, and when it is not, again only after 50 times its own time, so it
 * never takes more than ~2 % of a core.
 */
function paced<T>(read: () => T): (now: number) => T {
  let value: T | undefined;
  let due = 0;
  return (now) => {
    if (value === undefined || now >= due) {
      const started = performance.now();
      value = read();
      const took = performance.now() - started;
      due = took * 50 > 1000 ? now + took * 50 : 0;
    }
    return value;
  };
}

/**
 * The SQL of `svc top` (its repository: a PostgreSQL store implements the same reads).
 * On the data dir it reads the whole server through a read-only connection (openReadOnly):
 * a server writing beside it is never blocked (WAL), and nothing is written. Through
 * `GET /v1/top` it reads one project (`projectId`) on the server's own connection.
 *
 * The last minute is kept as per-second counts, and each reading adds only the events
 * written since the one before, counted by SQLite (grouped by second and type), so a
 * live view refreshing every second costs about what the server wrote in that second.
 */
export function createTopReader(db: Db, opts: { clock?: Clock; projectId?: string } = {}) {
  const clock = opts.clock ?? systemClock;
  const project = opts.projectId ?? null;
  const scoped = (col: string) => (project === null ? '1' : `${col} = @project`);
  const args = project === null ? {} : { project };

  const maxSeq = db.prepare<[], number | null>('SELECT max(seq) FROM email_events').pluck();
  const events = db.prepare<Record<string, unknown>, { second: string; type: string; n: number }>(
    project === null
      ? `SELECT substr(created_at, 1, 19) AS second, type, count(*) AS n FROM email_events
         WHERE seq > @after AND seq <= @upto GROUP BY 1, 2`
      : `SELECT substr(ev.created_at, 1, 19) AS second, ev.type, count(*) AS n
         FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
         WHERE ev.seq > @after AND ev.seq <= @upto AND e.project_id = @project GROUP BY 1, 2`,
  );
  // The recipient's domain of the events that settle a recipient (data.recipient).
  const settled = db.prepare<Record<string, unknown>, { second: string; type: string; domain: string; n: number }>(
    `SELECT second, type, lower(substr(r, instr(r, '@') + 1)) AS domain, count(*) AS n FROM (
       SELECT substr(ev.created_at, 1, 19) AS second, ev.type, json_extract(ev.data, '$.recipient') AS r
       FROM email_events ev ${project === null ? '' : 'JOIN emails e ON e.seq = ev.email_seq'}
       WHERE ev.seq > @after AND ev.seq <= @upto AND (ev.type = 'delivered' OR ev.type = 'bounced' OR ev.type = 'failed')
         AND ${scoped('e.project_id')})
     GROUP BY 1, 2, 3`,
  );
  const hour = db.prepare<Record<string, unknown>, { type: string; n: number }>(
    // project_id leads the rollup's primary key: IN (every project) lets the whole-server read use it too.
    `SELECT type, sum(count) AS n FROM email_stats
     WHERE project_id IN (SELECT id FROM projects WHERE ${scoped('id')}) AND bucket_hour = @hour GROUP BY type`,
  );
  const queue = db.prepare<Record<string, unknown>, { recipients: number; oldest: string | null }>(
    project === null ? QUEUE_STATS_SQL : `${QUEUE_STATS_SQL} AND r.project_id = @project`,
  );
  const waiting = db.prepare<Record<string, unknown>, { domain: string; waiting: number; deferred: number }>(
    `SELECT domain, count(*) AS waiting, sum(attempts > 0) AS deferred FROM recipients
     WHERE next_attempt_at IS NOT NULL AND ${scoped('project_id')} GROUP BY domain`,
  );
  const throttles = db.prepare<
    [],
    { domain: string; concurrency: number; paused_until: string | null; reason: string | null }
  >('SELECT domain, concurrency, paused_until, reason FROM destination_throttles');
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
     WHERE d.seq > @after AND d.seq <= @upto AND d.status = 'failed' AND ${scoped('w.project_id')} GROUP BY 1`,
  );
  const nodes = db.prepare<[string], NodeRow>(FRESH_NODES_SQL);
  const emailOf = db.prepare<[string], { id: string; status: string; project_id: string }>(
    'SELECT id, status, project_id FROM emails WHERE id = ?',
  );
  const explain = db.prepare<[string], QueueRecipient>(EXPLAIN_SQL);
  const latestSql = new Map<string, ReturnType<Db['prepare']>>();

  /** The newest emails of one project that pass the filter (the same reading as GET /v1/emails). */
  function latestOf(projectId: string, f: TopFilter): (LatestEmail & { seq: number })[] {
    const shape = `${f.status ? 's' : ''}${f.to_email ? 'a' : ''}${f.tag ? 't' : ''}`;
    let stmt = latestSql.get(shape);
    if (!stmt) {
      const where = ['e.project_id = @p'];
      if (f.status) where.push('e.status = @status');
      if (f.to_email)
        where.push('e.seq IN (SELECT email_seq FROM recipients WHERE project_id = @p AND address_lc = @to)');
      if (f.tag) where.push('e.seq IN (SELECT email_seq FROM email_tags WHERE project_id = @p AND tag = @tag)');
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

  // The last minute, per second: events by type, and settled recipients by domain.
  let after: number | undefined;
  const seconds = new Map<number, Map<string, number>>();
  const domainSeconds = new Map<number, Map<string, { delivered: number; bounced: number }>>();
  // The last hour of webhook failures, per minute.
  let deliveriesAfter: number | undefined;
  const minutes = new Map<number, number>();

  function readEvents(now: number): void {
    const upto = maxSeq.get() ?? 0;
    after ??= Math.max(0, upto - EVENT_SCAN);
    if (upto <= after) return;
    const floor = Math.floor(now / 1000) - 60;
    const range = { ...args, after, upto };
    for (const r of events.all(range)) {
      const s = secondOf(r.second);
      if (s < floor) continue;
      let bucket = seconds.get(s);
      if (!bucket) seconds.set(s, (bucket = new Map<string, number>()));
      add(bucket, r.type, r.n);
    }
    for (const r of settled.all(range)) {
      const s = secondOf(r.second);
      if (s < floor) continue;
      let bucket = domainSeconds.get(s);
      if (!bucket) domainSeconds.set(s, (bucket = new Map<string, { delivered: number; bounced: number }>()));
      const d = bucket.get(r.domain) ?? { delivered: 0, bounced: 0 };
      if (r.type === 'delivered') d.delivered += r.n;
      else d.bounced += r.n;
      bucket.set(r.domain, d);
    }
    after = upto;
  }

  function lastMinute(now: number) {
    readEvents(now);
    const floor = Math.floor(now / 1000) - 60;
    const total: Record<string, number> = {};
    for (const [second, bucket] of seconds) {
      if (second < floor) seconds.delete(second);
      else for (const [type, n] of bucket) total[type] = (total[type] ?? 0) + n;
    }
    const domains = new Map<string, { delivered: number; bounced: number }>();
    for (const [second, bucket] of domainSeconds) {
      if (second < floor) domainSeconds.delete(second);
      else
        for (const [domain, c] of bucket) {
          const d = domains.get(domain) ?? { delivered: 0, bounced: 0 };
          d.delivered += c.delivered;
          d.bounced += c.bounced;
          domains.set(domain, d);
        }
    }
    return { total, domains };
  }

  /** Per second of the 60 before `now`, oldest first, the events of `types`. */
  function series(now: number, types: string[]): number[] {
    const last = Math.floor(now / 1000);
    return Array.from({ length: 60 }, (_, i) => {
      const bucket = seconds.get(last - 59 + i);
      return bucket ? types.reduce((a, t) => a + (bucket.get(t) ?? 0), 0) : 0;
    });
  }

  function failedLastHour(now: number): number {
    const upto = maxDelivery.get() ?? 0;
    deliveriesAfter ??= Math.max(0, upto - DELIVERY_SCAN);
    const floor = Math.floor(now / 60_000) - 60;
    if (upto > deliveriesAfter) {
      for (const r of failures.all({ ...args, after: deliveriesAfter, upto })) {
        const m = Math.floor(Date.parse(`${r.minute}:00Z`) / 60_000);
        if (m >= floor) add(minutes, m, r.n);
      }
      deliveriesAfter = upto;
    }
    let total = 0;
    for (const [m, n] of minutes) {
      if (m < floor) minutes.delete(m);
      else total += n;
    }
    return total;
  }

  const queueNow = paced(() => queue.get(args)!);
  const waitingNow = paced(() => waiting.all(args));

  function destinations(now: number, settledByDomain: Map<string, { delivered: number; bounced: number }>) {
    const all = new Map<string, Destination>();
    const entry = (domain: string) => {
      let d = all.get(domain);
      if (!d)
        all.set(
          domain,
          (d = {
            domain,
            waiting: 0,
            deferred: 0,
            delivered: 0,
            bounced: 0,
            throttled: false,
            concurrency: null,
            paused_until: null,
            reason: null,
          }),
        );
      return d;
    };
    for (const w of waitingNow(now)) Object.assign(entry(w.domain), { waiting: w.waiting, deferred: w.deferred });
    for (const [domain, c] of settledByDomain) Object.assign(entry(domain), c);
    for (const t of throttles.all()) {
      // Whole server: every throttled destination; one project: those it sends to.
      const d = project === null ? entry(t.domain) : all.get(t.domain);
      if (!d) continue;
      const paused = t.paused_until !== null && Date.parse(t.paused_until) > now ? t.paused_until : null;
      Object.assign(d, { throttled: true, concurrency: t.concurrency, paused_until: paused, reason: t.reason });
    }
    return [...all.values()]
      .sort(
        (a, b) =>
          b.waiting - a.waiting ||
          b.delivered + b.bounced - (a.delivered + a.bounced) ||
          (a.domain < b.domain ? -1 : 1),
      )
      .slice(0, DESTINATIONS);
  }

  return {
    snapshot(filter: TopFilter = {}, now = clock.now()): Snapshot {
      const q = queueNow(now);
      const minute = lastMinute(now);
      const live = nodes.all(new Date(now - NODE_STALE_MS).toISOString());
      return {
        at: new Date(now).toISOString(),
        project_id: project,
        last_minute: minute.total,
        per_second: {
          accepted: series(now, ['queued', 'simulated']),
          delivered: series(now, ['delivered']),
          bounced: series(now, ['bounced', 'failed']),
        },
        this_hour: byType(hour.all({ ...args, hour: hourOf(now) })),
        previous_hour: byType(hour.all({ ...args, hour: hourOf(now - 3_600_000) })),
        queue: {
          recipients: q.recipients,
          oldest_seconds: q.oldest ? Math.max(0, Math.round((now - Date.parse(q.oldest)) / 1000)) : 0,
        },
        destinations: destinations(now, minute.domains),
        filter,
        latest: projects
          .all(args)
          .flatMap((p) => latestOf(p, filter))
          .sort((a, b) => b.seq - a.seq)
          .slice(0, LATEST)
          .map(({ seq: _seq, ...e }) => e),
        webhooks: {
          pending_events: pending.get(args)!.n,
          failed_last_hour: failedLastHour(now),
          auto_disabled: disabled.all(args),
        },
        relay: { nodes: live.length, sessions: live.reduce((a, n) => a + n.relay_sessions, 0) },
      };
    },
    /** One email's events and queue standing; null when there is none (in this project). */
    detail(emailId: string): EmailDetail | null {
      const e = emailOf.get(emailId);
      if (!e || (project !== null && e.project_id !== project)) return null;
      return {
        id: e.id,
        status: e.status,
        events: readEmailEvents(db, emailId),
        waiting: explain.all(emailId).map(waitingLine),
      };
    },
  };
}

export type TopReader = ReturnType<typeof createTopReader>;

/** An email's events for the detail pane, oldest first. */
function readEmailEvents(db: Db, emailId: string): EmailDetail['events'] {
  const rows = db
    .prepare<[string], { type: string; created_at: string; data: string }>(
      `SELECT ev.type, ev.created_at, ev.data FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
       WHERE e.id = ? ORDER BY ev.seq`,
    )
    .all(emailId);
  return rows.map((r) => {
    const data = JSON.parse(r.data) as Record<string, unknown>;
    const text = [data.smtp_code, data.smtp_enhanced, data.smtp_text ?? data.reason ?? data.previous_attempt]
      .filter((x): x is string | number => typeof x === 'string' || typeof x === 'number')
      .join(' ');
    return {
      type: r.type,
      at: r.created_at,
      recipient: typeof data.recipient === 'string' ? data.recipient : null,
      detail: text,
    };
  });
}
