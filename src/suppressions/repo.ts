import type { Port } from '../store/port.ts';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type { Suppression, SuppressionReason } from './schema.ts';

/** SQL of the per-project suppression list (addresses stored lower-cased). */
export function createSuppressionsRepo(db: Db, tx: Committer, audit: AuditWriter) {
  const one = db.prepare<[string, string], Suppression>(
    'SELECT project_id, email, reason, created_at FROM suppressions WHERE project_id = ? AND email = ?',
  );
  const page = db.prepare<[string, string, number], Suppression>(
    `SELECT project_id, email, reason, created_at FROM suppressions
     WHERE project_id = ? AND email > ? ORDER BY email LIMIT ?`,
  );
  const upsert = db.prepare(
    `INSERT INTO suppressions (project_id, email, reason, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason`,
  );
  const del = db.prepare('DELETE FROM suppressions WHERE project_id = ? AND email = ?');
  return {
    /** Sync lookup for use inside a send transaction. */
    findSync: (projectId: string, email: string) => one.get(projectId, email),
    find: (projectId: string, email: string) => Promise.resolve(one.get(projectId, email)),
    /** Keyset page ordered by address; `after` is the last address of the previous page. */
    listPage: (projectId: string, after: string, limit: number) => Promise.resolve(page.all(projectId, after, limit)),
    /** Sync upsert for use inside another transaction (a hard bounce recorded with its delivery result). */
    addSync: (projectId: string, email: string, reason: SuppressionReason, at: string) =>
      void upsert.run(projectId, email, reason, at),
    /** Adds or updates entries in one transaction with their audit row. */
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

/** SQLite's, with the helpers other repositories call inside their own transactions. */
export type SqliteSuppressions = ReturnType<typeof createSuppressionsRepo>;
/** The suppressions repository behind the store seam (SQLite here, PostgreSQL in repo-pg.ts). */
export type SuppressionsRepo = Port<Omit<SqliteSuppressions, 'findSync' | 'addSync'>>;
