import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import { filterParams, type Suppression, type SuppressionFilter, type SuppressionReason } from './schema.ts';
import type { SuppressionsStore } from './store.ts';
import { iso } from '../lib/clock.ts';
import { createNoticeWriter, type Subscriber } from '../events/index.ts';
import { suppressionNotice } from './notices.ts';

/**
 * SQLite's synchronous helpers, off the store interface: other repositories call them inside
 * their own transactions (a send's check, a hard bounce recorded with its delivery result).
 */
export interface SqliteSuppressionsSync {
  /** find (store.ts), synchronous: for use inside a send transaction. */
  findSync(projectId: string, email: string): Suppression | undefined;
  /**
   * One entry of addMany (store.ts) without its own transaction or audit row: inside the
   * caller's; `sourceEmailId` is the email whose bounce or complaint adds it (the notice names it).
   */
  addSync(projectId: string, email: string, reason: SuppressionReason, at: string, sourceEmailId?: string): void;
}

/** SQLite's suppressions: the store, with the helpers other repositories call inside their own transactions. */
export type SqliteSuppressions = SuppressionsStore & SqliteSuppressionsSync;

/** The suppressions store on SQLite (store.ts; addresses stored lower-cased). */
export function createSuppressionsRepo(db: Db, tx: Committer, audit: AuditWriter): SqliteSuppressions {
  const one = db.prepare<[string, string], Suppression>(
    'SELECT project_id, email, reason, created_at FROM suppressions WHERE project_id = ? AND email = ?',
  );
  const many = db.prepare<[string, string], Suppression>(
    `SELECT project_id, email, reason, created_at FROM suppressions
     WHERE project_id = ? AND email IN (SELECT value FROM json_each(?))`,
  );
  type PageArgs = { project: string; after: string; like: string | null; reason: string | null; limit: number };
  const page = db.prepare<[PageArgs], Suppression>(
    `SELECT project_id, email, reason, created_at FROM suppressions
     WHERE project_id = +@project AND email > +@after AND (@like IS NULL OR email LIKE +@like ESCAPE '\\')
       AND (@reason IS NULL OR reason = +@reason)
     ORDER BY email LIMIT +@limit`,
  );
  const upsert = db.prepare(
    `INSERT INTO suppressions (project_id, email, reason, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason`,
  );
  const del = db.prepare<[string, string], Suppression>(
    'DELETE FROM suppressions WHERE project_id = ? AND email = ? RETURNING project_id, email, reason, created_at',
  );
  // An address that joins the list queues `suppression.added` for the project's webhooks that
  // name it; one already listed (a new reason) does not. The read before the upsert is made
  // only when such a webhook exists.
  const notices = createNoticeWriter(db);
  const added = (projectId: string) => notices.subscribers([projectId], 'suppression.added');
  const add = (
    projectId: string,
    email: string,
    reason: SuppressionReason,
    at: string,
    source?: string,
    subs: Subscriber[] = added(projectId),
  ) => {
    const listed = subs.length > 0 && one.get(projectId, email) !== undefined;
    upsert.run(projectId, email, reason, at);
    if (subs.length > 0 && !listed) {
      const change = { project_id: projectId, email, reason, created_at: at, source_email_id: source };
      notices.write(subs, suppressionNotice('added', change, at));
    }
  };
  return {
    findSync: (projectId: string, email: string) => one.get(projectId, email),
    find: (projectId: string, email: string) => Promise.resolve(one.get(projectId, email)),
    findMany: (projectId: string, emails: readonly string[]) =>
      Promise.resolve(emails.length ? many.all(projectId, JSON.stringify(emails)) : []),
    listPage: (projectId: string, after: string, limit: number, filter: SuppressionFilter = {}) => {
      const { like, reason } = filterParams(filter);
      return Promise.resolve(page.all({ project: projectId, after, like, reason, limit }));
    },
    addSync: (projectId: string, email: string, reason: SuppressionReason, at: string, source?: string) =>
      add(projectId, email, reason, at, source),
    addMany: (projectId: string, rows: { email: string; reason: SuppressionReason }[], at: string, a: Audited) =>
      tx.write(() => {
        // The last reason given for an address wins, and its notice (if any) names that one.
        // Who gets `suppression.added` is read once for the lot (an import is thousands of rows).
        const subs = added(projectId);
        for (const [email, reason] of new Map(rows.map((r) => [r.email, r.reason]))) {
          add(projectId, email, reason, at, undefined, subs);
        }
        audit.record(a.actor, a.entry, a.atMs);
      }),
    remove: (projectId: string, email: string, a: Audited) =>
      tx.write(() => {
        const gone = del.get(projectId, email);
        if (!gone) return false;
        audit.record(a.actor, a.entry, a.atMs);
        const removed = suppressionNotice('removed', gone, iso(a.atMs));
        notices.write(notices.subscribers([projectId], 'suppression.removed'), removed);
        return true;
      }),
  };
}
