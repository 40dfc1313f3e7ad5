// Events of a project's resources (events/index.ts RESOURCE_EVENTS): a domain's verification
// changing, an address joining or leaving a suppression list. They are not an email's, so no
// email_events row and no trigger queues them: the write that makes the change queues one
// outbox row per subscribed webhook of the projects concerned, carrying its body, in the same
// transaction (createNoticeWriter on SQLite, createPgNoticeWriter on PostgreSQL, below). The
// webhooks dispatcher sends them as it sends every row with a body (email.received's too).
import type { ResourceEvent } from './index.ts';
import { newId } from '../lib/ids.ts';
import type { Db } from '../store/db.ts';
import type { PgTx } from '../store/pg-committer.ts';

/** One resource event: its id (the body's `evt_<id>`), type, time and data. */
export interface Notice {
  id: string;
  type: ResourceEvent;
  /** ISO time of the change. */
  at: string;
  data: Record<string, unknown>;
}

/** A notice of `type` at `at` with a fresh id. */
export function notice(type: ResourceEvent, at: string, data: Record<string, unknown>): Notice {
  return { id: newId(Date.parse(at)), type, at, data };
}

/**
 * The body: the contract's envelope of an event (`id`, `type`, `created_at` with microseconds,
 * `data`), as an email event's, with the resource in `data`. Built once, stored with the row:
 * every attempt and every webhook sends the same bytes.
 */
export function noticeBody(n: Notice): string {
  return JSON.stringify({ id: `evt_${n.id}`, type: n.type, created_at: `${n.at.slice(0, 23)}000Z`, data: n.data });
}

/** A webhook a notice goes to: its id, and whether it was active (an inactive one records the event as skipped). */
export interface Subscriber {
  id: string;
  is_active: number;
}

/** The outbox row of a notice for one webhook, as both stores insert it. */
export function noticeRow(n: Notice, hook: Subscriber, body: string) {
  return {
    id: newId(Date.parse(n.at)),
    webhook_id: hook.id,
    event_id: n.id,
    event_type: n.type,
    payload: body,
    skip: 1 - hook.is_active,
    next_attempt_at: n.at,
    created_at: n.at,
  };
}

/** Queues resource events  inside the caller's SQLite transaction. */
export interface NoticeWriter {
  /** The webhooks of these projects that name `type`, active or not; none most of the time, in one read. */
  subscribers(projectIds: readonly string[], type: ResourceEvent): Subscriber[];
  /** One outbox row per subscriber, each carrying the notice's body. */
  write(subscribers: readonly Subscriber[], n: Notice): void;
}

/** The notice writer on SQLite: its reads and inserts run in whatever transaction calls them. */
export function createNoticeWriter(db: Db): NoticeWriter {
  const any = db.prepare<[], number>('SELECT EXISTS (SELECT 1 FROM webhooks)').pluck();
  const subs = db.prepare<[string, string], Subscriber>(
    `SELECT id, is_active FROM webhooks WHERE project_id IN (SELECT value FROM json_each(?))
       AND EXISTS (SELECT 1 FROM json_each(events) j WHERE j.value = ?) ORDER BY rowid`,
  );
  const insert = db.prepare(
    `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, skip, next_attempt_at, created_at)
     VALUES (@id, @webhook_id, @event_id, @event_type, @payload, @skip, @next_attempt_at, @created_at)`,
  );
  return {
    subscribers: (projectIds, type) =>
      projectIds.length === 0 || !any.get() ? [] : subs.all(JSON.stringify(projectIds), type),
    write: (subscribers, n) => {
      if (subscribers.length === 0) return;
      const body = noticeBody(n);
      for (const hook of subscribers) insert.run(noticeRow(n, hook, body));
    },
  };
}

/** Queues resource events  inside the caller's PostgreSQL transaction. */
export interface PgNoticeWriter {
  /** One outbox row per webhook of these projects that names the notice's type, each carrying its body, in one statement. */
  write(t: PgTx, projectIds: readonly string[], notices: readonly Notice[]): Promise<void>;
}

export function createPgNoticeWriter(): PgNoticeWriter {
  return {
    write: async (t, projectIds, notices) => {
      if (projectIds.length === 0 || notices.length === 0) return;
      await t.query(
        `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, skip, next_attempt_at, created_at)
         SELECT gen_random_uuid()::text, w.id, n.id, n.type, n.body, 1 - w.is_active, n.at, n.at
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS n(id, type, body, at, ord)
           JOIN webhooks w ON w.project_id = ANY($1::text[]) AND w.events::jsonb ? n.type
         ORDER BY n.ord, w.seq`,
        [
          projectIds,
          notices.map((n) => n.id),
          notices.map((n) => n.type),
          notices.map(noticeBody),
          notices.map((n) => n.at),
        ],
      );
    },
  };
}
