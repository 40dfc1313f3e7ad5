import type { Db } from '../store/db.ts';

/** What `svc top` shows: one reading of the data dir, by cheap queries only. */
export interface Snapshot {
  at: string;
  /** Events of the last minute, by type (at most the newest EVENT_SCAN events are read). */
  last_minute: Record<string, number>;
  /** Events of this UTC hour and the one before, by type (the stats rollup). */
  this_hour: Record<string, number>;
  previous_hour: Record<string, number>;
  queue: { recipients: number; oldest_seconds: number };
  /** Destinations with recipients waiting, the most first. */
  waiting_by_destination: { domain: string; recipients: number; throttled: boolean; concurrency: number | null }[];
  latest: { id: string; status: string; from_email: string; to: string[]; subject: string; created_at: string }[];
  webhooks: { pending_events: number; auto_disabled: { id: string; url: string }[] };
}

/** Events read back from the newest for the last minute: bounds the cost on a busy server. */
const EVENT_SCAN = 200_000;

const byType = (rows: { type: string; n: number }[]) => Object.fromEntries(rows.map((r) => [r.type, r.n]));
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/**
 * The SQL of `svc top` (its repository: a PostgreSQL store implements the same read).
 * Meant for a read-only connection (openReadOnly): a server writing beside it is
 * never blocked (WAL), and nothing is written.
 */
export function readSnapshot(db: Db, now = Date.now()): Snapshot {
  const since = new Date(now - 60_000).toISOString();
  const lastMinute = db
    .prepare<[number, string], { type: string; n: number }>(
      `SELECT type, count(*) AS n FROM email_events
         WHERE seq > (SELECT coalesce(max(seq), 0) FROM email_events) - ? AND created_at >= ? GROUP BY type`,
    )
    .all(EVENT_SCAN, since);
  const hour = db.prepare<[string], { type: string; n: number }>(
    'SELECT type, sum(count) AS n FROM email_stats WHERE bucket_hour = ? GROUP BY type',
  );
  const queue = db
    .prepare<[], { recipients: number; oldest: string | null }>(
      `SELECT count(*) AS recipients, min(e.created_at) AS oldest
         FROM recipients r JOIN emails e ON e.seq = r.email_seq WHERE r.next_attempt_at IS NOT NULL`,
    )
    .get()!;
  const waiting = db
    .prepare<[], { domain: string; recipients: number; concurrency: number | null }>(
      `SELECT r.domain, count(*) AS recipients, t.concurrency
         FROM recipients r LEFT JOIN destination_throttles t ON t.domain = r.domain
         WHERE r.next_attempt_at IS NOT NULL GROUP BY r.domain ORDER BY recipients DESC, r.domain LIMIT 10`,
    )
    .all();
  const latest = db
    .prepare<
      [],
      { id: string; status: string; from_email: string; to_emails: string; subject: string; created_at: string }
    >('SELECT id, status, from_email, to_emails, subject, created_at FROM emails ORDER BY seq DESC LIMIT 10')
    .all();
  const pending = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM webhook_outbox WHERE skip = 0').get()!.n;
  const disabled = db
    .prepare<[], { id: string; url: string }>('SELECT id, url FROM webhooks WHERE auto_disabled = 1 ORDER BY id')
    .all();
  return {
    at: new Date(now).toISOString(),
    last_minute: byType(lastMinute),
    this_hour: byType(hour.all(hourOf(now))),
    previous_hour: byType(hour.all(hourOf(now - 3_600_000))),
    queue: {
      recipients: queue.recipients,
      oldest_seconds: queue.oldest ? Math.max(0, Math.round((now - Date.parse(queue.oldest)) / 1000)) : 0,
    },
    waiting_by_destination: waiting.map((w) => ({ ...w, throttled: w.concurrency !== null })),
    latest: latest.map(({ to_emails, ...e }) => ({ ...e, to: JSON.parse(to_emails) as string[] })),
    webhooks: { pending_events: pending, auto_disabled: disabled },
  };
}

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
