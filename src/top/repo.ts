import { systemClock, type Clock } from '../lib/clock.ts';
import type { Db } from '../store/db.ts';
import { QUEUE_STATS_SQL } from '../delivery/index.ts';

/** What `svc top` shows: one reading of the data dir, by cheap queries only. */
export interface Snapshot {
  at: string;
  /** Events of the last minute, by type. */
  last_minute: Record<string, number>;
  /**
   * Per second over the last minute, oldest first (60 values): emails accepted (queued
   * or simulated), recipients delivered, recipients bounced or failed.
   */
  per_second: { accepted: number[]; delivered: number[]; bounced: number[] };
  /** Events of this UTC hour and the one before, by type (the stats rollup). */
  this_hour: Record<string, number>;
  previous_hour: Record<string, number>;
  queue: { recipients: number; oldest_seconds: number };
  /** Destinations with recipients waiting, the most first. */
  waiting_by_destination: { domain: string; recipients: number; throttled: boolean; concurrency: number | null }[];
  latest: { id: string; status: string; from_email: string; to: string[]; subject: string; created_at: string }[];
  webhooks: { pending_events: number; auto_disabled: { id: string; url: string }[] };
}

/** Events read back from the newest at the first reading: bounds the cost on a busy server. */
const EVENT_SCAN = 200_000;
/** Events read per step when catching up. */
const STEP = 20_000;

const byType = (rows: { type: string; n: number }[]) => Object.fromEntries(rows.map((r) => [r.type, r.n]));
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/**
 * The SQL of `svc top` (its repository: a PostgreSQL store implements the same read),
 * meant for a read-only connection (openReadOnly): a server writing beside it is never
 * blocked (WAL), and nothing is written. The last minute is kept as per-second counts
 * and each reading adds only the events written since the one before, so a live view
 * refreshing every second reads what the server wrote in that second, not a minute's.
 */
export function createTopReader(db: Db, clock: Clock = systemClock) {
  const maxSeq = db.prepare<[], { seq: number | null }>('SELECT max(seq) AS seq FROM email_events');
  const newer = db.prepare<[number, number], { seq: number; type: string; created_at: string }>(
    'SELECT seq, type, created_at FROM email_events WHERE seq > ? ORDER BY seq LIMIT ?',
  );
  const hour = db.prepare<[string], { type: string; n: number }>(
    'SELECT type, sum(count) AS n FROM email_stats WHERE bucket_hour = ? GROUP BY type',
  );
  const queue = db.prepare<[], { recipients: number; oldest: string | null }>(QUEUE_STATS_SQL);
  const waiting = db.prepare<[], { domain: string; recipients: number; concurrency: number | null }>(
    `SELECT r.domain, count(*) AS recipients, t.concurrency
     FROM recipients r LEFT JOIN destination_throttles t ON t.domain = r.domain
     WHERE r.next_attempt_at IS NOT NULL GROUP BY r.domain ORDER BY recipients DESC, r.domain LIMIT 10`,
  );
  const latest = db.prepare<
    [],
    { id: string; status: string; from_email: string; to_emails: string; subject: string; created_at: string }
  >('SELECT id, status, from_email, to_emails, subject, created_at FROM emails ORDER BY seq DESC LIMIT 10');
  const pending = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM webhook_outbox WHERE skip = 0');
  const disabled = db.prepare<[], { id: string; url: string }>(
    'SELECT id, url FROM webhooks WHERE auto_disabled = 1 ORDER BY id',
  );

  let after: number | undefined;
  /** Per second (epoch s) of the last minute: events by type. */
  const seconds = new Map<number, Map<string, number>>();

  /** Per second of the 60 before `now`, oldest first, the events of `types`. */
  function series(now: number, types: string[]): number[] {
    const last = Math.floor(now / 1000);
    return Array.from({ length: 60 }, (_, i) => {
      const bucket = seconds.get(last - 59 + i);
      return bucket ? types.reduce((a, t) => a + (bucket.get(t) ?? 0), 0) : 0;
    });
  }

  function lastMinute(now: number): Record<string, number> {
    const floor = Math.floor(now / 1000) - 60;
    after ??= Math.max(0, (maxSeq.get()?.seq ?? 0) - EVENT_SCAN);
    for (let read = 0; read < EVENT_SCAN; read += STEP) {
      const rows = newer.all(after, STEP);
      for (const r of rows) {
        after = r.seq;
        const second = Math.floor(Date.parse(r.created_at) / 1000);
        if (second < floor) continue;
        const bucket = seconds.get(second) ?? new Map<string, number>();
        bucket.set(r.type, (bucket.get(r.type) ?? 0) + 1);
        seconds.set(second, bucket);
      }
      if (rows.length < STEP) break;
    }
    const total: Record<string, number> = {};
    for (const [second, bucket] of seconds) {
      if (second < floor) {
        seconds.delete(second);
        continue;
      }
      for (const [type, n] of bucket) total[type] = (total[type] ?? 0) + n;
    }
    return total;
  }

  return {
    snapshot(now = clock.now()): Snapshot {
      const q = queue.get()!;
      return {
        at: new Date(now).toISOString(),
        last_minute: lastMinute(now),
        per_second: {
          accepted: series(now, ['queued', 'simulated']),
          delivered: series(now, ['delivered']),
          bounced: series(now, ['bounced', 'failed']),
        },
        this_hour: byType(hour.all(hourOf(now))),
        previous_hour: byType(hour.all(hourOf(now - 3_600_000))),
        queue: {
          recipients: q.recipients,
          oldest_seconds: q.oldest ? Math.max(0, Math.round((now - Date.parse(q.oldest)) / 1000)) : 0,
        },
        waiting_by_destination: waiting.all().map((w) => ({ ...w, throttled: w.concurrency !== null })),
        latest: latest.all().map(({ to_emails, ...e }) => ({ ...e, to: JSON.parse(to_emails) as string[] })),
        webhooks: { pending_events: pending.get()!.n, auto_disabled: disabled.all() },
      };
    },
    events: (emailId: string) => readEvents(db, emailId),
  };
}

export type TopReader = ReturnType<typeof createTopReader>;

/** An email's events for the detail pane, oldest first. */
export function readEvents(
  db: Db,
  emailId: string,
): { type: string; at: string; recipient: string | null; detail: string }[] {
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
