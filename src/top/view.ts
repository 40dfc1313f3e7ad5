import { systemClock, type Clock } from '../lib/clock.ts';
import { waitingLine } from '../delivery/index.ts';
import { NODE_STALE_MS } from '../nodes/index.ts';
import type { TopFilter } from './filter.ts';
import type { Destination, EmailDetail, Snapshot } from './schema.ts';
import type { TopData, TopStore } from './store.ts';

/** Events read back from the newest at the first reading: bounds the cost on a busy server. */
export const EVENT_SCAN = 200_000;
/** Webhook attempt records read back at the first reading. */
export const DELIVERY_SCAN = 100_000;
export const LATEST = 10;
const DESTINATIONS = 10;

/** How long a missing seq is looked for again: far past any open transaction; a rolled-back one never comes. */
const LATE_MS = 120_000;
const LATE_MAX = 10_000;

/**
 * Where a reading of an append-only table (by seq) stands: the last seq read, and the seqs
 * below it that were not there yet. One SQLite writer commits seqs in order, so it never
 * misses one; PostgreSQL's transactions commit in any order, so a lower seq can appear after
 * a higher one was read, and is read then instead of never.
 */
function createCursor() {
  let after: number | null = null;
  const late = new Map<number, number>();
  return {
    args: (): [number | null, number[]] => [after, [...late.keys()]],
    moved(r: { upto: number; missing: number[] }, now: number): void {
      const still = new Set(r.missing);
      for (const seq of late.keys()) if (!still.has(seq)) late.delete(seq);
      for (const seq of r.missing) if (!late.has(seq)) late.set(seq, now);
      for (const [seq, since] of late) if (now - since > LATE_MS || late.size > LATE_MAX) late.delete(seq);
      after = Math.max(after ?? 0, r.upto);
    },
  };
}

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
function paced<T>(read: () => Promise<T>): (now: number) => Promise<T> {
  let value: T | undefined;
  let due = 0;
  return async (now) => {
    if (value === undefined || now >= due) {
      const started = performance.now();
      value = await read();
      const took = performance.now() - started;
      due = took * 50 > 1000 ? now + took * 50 : 0;
    }
    return value;
  };
}

/**
 * svc top's view of a store: the last minute kept as per-second counts, each reading adding
 * only the events written since the one before, so a live view refreshing every second costs
 * about what the server wrote in that second.
 */
export function createTopView(
  data: TopData,
  opts: { clock?: Clock | undefined; projectId?: string | null | undefined } = {},
): TopStore {
  const clock = opts.clock ?? systemClock;
  const project = opts.projectId ?? null;

  // The last minute, per second: events by type, and settled recipients by domain.
  const eventsRead = createCursor();
  const seconds = new Map<number, Map<string, number>>();
  const domainSeconds = new Map<number, Map<string, { delivered: number; bounced: number }>>();
  // The last hour of webhook failures, per minute.
  const failuresRead = createCursor();
  const minutes = new Map<number, number>();

  async function readEvents(now: number): Promise<void> {
    const got = await data.newEvents(...eventsRead.args());
    const floor = Math.floor(now / 1000) - 60;
    for (const r of got.rows.events) {
      const s = secondOf(r.second);
      if (s < floor) continue;
      let bucket = seconds.get(s);
      if (!bucket) seconds.set(s, (bucket = new Map<string, number>()));
      add(bucket, r.type, r.n);
    }
    for (const r of got.rows.settled) {
      const s = secondOf(r.second);
      if (s < floor) continue;
      let bucket = domainSeconds.get(s);
      if (!bucket) domainSeconds.set(s, (bucket = new Map<string, { delivered: number; bounced: number }>()));
      const d = bucket.get(r.domain) ?? { delivered: 0, bounced: 0 };
      if (r.type === 'delivered') d.delivered += r.n;
      else d.bounced += r.n;
      bucket.set(r.domain, d);
    }
    eventsRead.moved(got, now);
  }

  async function lastMinute(now: number) {
    await readEvents(now);
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

  async function failedLastHour(now: number): Promise<number> {
    const got = await data.newFailures(...failuresRead.args());
    const floor = Math.floor(now / 60_000) - 60;
    for (const r of got.rows) {
      const m = Math.floor(Date.parse(`${r.minute}:00Z`) / 60_000);
      if (m >= floor) add(minutes, m, r.n);
    }
    failuresRead.moved(got, now);
    let total = 0;
    for (const [m, n] of minutes) {
      if (m < floor) minutes.delete(m);
      else total += n;
    }
    return total;
  }

  const queueNow = paced(() => data.queue());
  const waitingNow = paced(() => data.waiting());

  async function destinations(now: number, settledByDomain: Map<string, { delivered: number; bounced: number }>) {
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
            mta_sts: null,
          }),
        );
      return d;
    };
    for (const w of await waitingNow(now)) Object.assign(entry(w.domain), { waiting: w.waiting, deferred: w.deferred });
    for (const [domain, c] of settledByDomain) Object.assign(entry(domain), c);
    for (const t of await data.throttles()) {
      // Whole server: every throttled destination; one project: those it sends to.
      const d = project === null ? entry(t.domain) : all.get(t.domain);
      if (!d) continue;
      const paused = t.paused_until !== null && Date.parse(t.paused_until) > now ? t.paused_until : null;
      Object.assign(d, { throttled: true, concurrency: t.concurrency, paused_until: paused, reason: t.reason });
    }
    // Only destinations already listed: a policy alone does not make a domain busy.
    for (const p of await data.stsModes(new Date(now).toISOString())) {
      const d = all.get(p.domain);
      if (d && p.mode !== 'none') d.mta_sts = p.mode;
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
    async snapshot(filter: TopFilter = {}, now = clock.now()): Promise<Snapshot> {
      const q = await queueNow(now);
      const minute = await lastMinute(now);
      const live = await data.nodes(new Date(now - NODE_STALE_MS).toISOString());
      const latest = (await Promise.all((await data.projects()).map((p) => data.latest(p, filter)))).flat();
      return {
        at: new Date(now).toISOString(),
        project_id: project,
        last_minute: minute.total,
        per_second: {
          accepted: series(now, ['queued', 'simulated']),
          delivered: series(now, ['delivered']),
          bounced: series(now, ['bounced', 'failed']),
        },
        this_hour: byType(await data.hour(hourOf(now))),
        previous_hour: byType(await data.hour(hourOf(now - 3_600_000))),
        queue: {
          recipients: q.recipients,
          oldest_seconds: q.oldest ? Math.max(0, Math.round((now - Date.parse(q.oldest)) / 1000)) : 0,
        },
        destinations: await destinations(now, minute.domains),
        filter,
        latest: latest
          .sort((a, b) => b.seq - a.seq)
          .slice(0, LATEST)
          .map(({ seq: _seq, ...e }) => e),
        webhooks: {
          pending_events: await data.pendingWebhookEvents(),
          failed_last_hour: await failedLastHour(now),
          auto_disabled: await data.autoDisabledWebhooks(),
        },
        relay: { nodes: live.length, sessions: live.reduce((a, n) => a + n.relay_sessions, 0) },
      };
    },
    async detail(emailId: string): Promise<EmailDetail | null> {
      const e = await data.email(emailId);
      if (!e || (project !== null && e.project_id !== project)) return null;
      return {
        id: e.id,
        status: e.status,
        events: (await data.emailEvents(emailId)).map(presentEvent),
        waiting: (await data.explain(emailId)).map(waitingLine),
      };
    },
  };
}

/** The old name of svc top's store (store.ts), until the composition root says TopStore. */

/** An event as the detail pane shows it. */
function presentEvent(r: { type: string; created_at: string; data: string }): EmailDetail['events'][number] {
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
}
