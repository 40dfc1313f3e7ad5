import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import { filterParams, type Suppression, type SuppressionFilter, type SuppressionReason } from './schema.ts';
import type { SuppressionsStore } from './store.ts';

/**
 * SQLite's synchronous helpers, off the store interface: other repositories call them inside
 * their own transactions (a send's check, a hard bounce recorded with its delivery result).
 */
export interface SqliteSuppressionsSync {
  /** find (store.ts), synchronous: for use inside a send transaction. */
  findSync(projectId: string, email: string): Suppression | undefined;
  /** One entry of addMany (store.ts) without its own transaction or audit row: inside the caller's. */
  addSync(projectId: string, email: string, reason: SuppressionReason, at: string): void;
}

/** SQLite's suppressions: the store, with the helpers other repositories call inside their own transactions. */
export type SqliteSuppressions = SuppressionsStore & SqliteSuppressionsSync;

/** The suppressions store on SQLite (store.ts; addresses stored lower-cased). */
export function createSuppressionsRepo(db: Db, tx: Committer, audit: AuditWriter): SqliteSuppressions {
  const one = db.prepare<[string, string], Suppression>(
    'SELECT project_id, email, reason, created_at FROM suppressions WHERE project_id = ? AND email = ?',
  );
  type PageArgs = { project: string; after: string; like: string | null; reason: string | null; limit: number };
  const page = db.prepare<[PageArgs], Suppression>(
    `SELECT project_id, email, reason, created_at FROM suppressions
     WHERE project_id = @project AND email > @after AND (@like IS NULL OR email LIKE @like ESCAPE '\\')
       AND (@reason IS NULL OR reason = @reason)
     ORDER BY email LIMIT @limit`,
  );
  const upsert = db.prepare(
    `INSERT INTO suppressions (project_id, email, reason, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason`,
  );
  const del = db.prepare('DELETE FROM suppressions WHERE project_id = ? AND email = ?');
  return {
    findSync: (projectId: string, email: string) => one.get(projectId, email),
    find: (projectId: string, email: string) => Promise.resolve(one.get(projectId, email)),
    listPage: (projectId: string, after: string, limit: number, filter: SuppressionFilter = {}) => {
      const { like, reason } = filterParams(filter);
      return Promise.resolve(page.all({ project: projectId, after, like, reason, limit }));
    },
    addSync: (projectId: string, email: string, reason: SuppressionReason, at: string) =>
      void upsert.run(projectId, email, reason, at),
    addMany: (projectId: string, rows: { email: string; reason: SuppressionReason }[], at: string, a: Audited) =>
      tx.write(() => {
        rows.forEach((r) => upsert.run(projectId, r.email, r.reason, at));
        audit.record(a.actor, a.entry, a.atMs);
      }),
    remove: (projectId: string, email: string, a: Audited) =>
      tx.write(() => {
        const changed = del.run(projectId, email).changes > 0;
        if (changed) audit.record(a.actor, a.entry, a.atMs);
        return changed;
      }),
  };
}
