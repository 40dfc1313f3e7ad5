import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import { filterParams, type Suppression, type SuppressionFilter, type SuppressionReason } from './schema.ts';
import type { SuppressionsStore } from './store.ts';

const UPSERT = `INSERT INTO suppressions (project_id, email, reason, created_at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason`;

/** PostgreSQL's suppressions: the store, with the upsert other repositories run in their own transactions. */
export type PgSuppressions = SuppressionsStore & {
  /** One entry of addMany (store.ts) inside the caller's transaction `t`, without an audit row. */
  add(t: PgTx, projectId: string, email: string, reason: SuppressionReason, at: string): Promise<void>;
  /** The reasons the project's list gives for these (lower-cased) addresses, read in `t`: one read for all. */
  reasonsIn(t: PgTx, projectId: string, emails: readonly string[]): Promise<Map<string, string>>;
};

/**
 * The suppressions store on PostgreSQL (store.ts; addresses stored lower-cased). Pages are
 * ordered by bytes (`COLLATE "C"`), as SQLite orders them, whatever the database's collation:
 * a page's `after` must mean the same on both stores.
 */
export function createPgSuppressionsRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): PgSuppressions {
  return {
    find: async (projectId: string, email: string) =>
      (
        await pool.query<Suppression>(
          'SELECT project_id, email, reason, created_at FROM suppressions WHERE project_id = $1 AND email = $2',
          [projectId, email],
        )
      ).rows[0],
    listPage: async (projectId: string, after: string, limit: number, filter: SuppressionFilter = {}) => {
      const { like, reason } = filterParams(filter);
      const r = await pool.query<Suppression>(
        `SELECT project_id, email, reason, created_at FROM suppressions
         WHERE project_id = $1 AND email COLLATE "C" > $2
           AND ($3::text IS NULL OR email LIKE $3 ESCAPE '\\') AND ($4::text IS NULL OR reason = $4)
         ORDER BY email COLLATE "C" LIMIT $5`,
        [projectId, after, like, reason, limit],
      );
      return r.rows;
    },
    add: async (t: PgTx, projectId: string, email: string, reason: SuppressionReason, at: string) => {
      await t.query(UPSERT, [projectId, email, reason, at]);
    },
    reasonsIn: async (t: PgTx, projectId: string, emails: readonly string[]) => {
      const found = await t.query<{ email: string; reason: string }>(
        'SELECT email, reason FROM suppressions WHERE project_id = $1 AND email = ANY($2::text[])',
        [projectId, emails],
      );
      return new Map(found.rows.map((r) => [r.email, r.reason]));
    },
    addMany: (projectId: string, rows: { email: string; reason: SuppressionReason }[], at: string, a: Audited) =>
      tx.write(async (t) => {
        if (rows.length > 0) {
          // One statement for the lot; the last reason given for an address wins, as row by row.
          const last = new Map(rows.map((r) => [r.email, r.reason]));
          await t.query(
            `INSERT INTO suppressions (project_id, email, reason, created_at)
             SELECT $1, e, r, $4 FROM unnest($2::text[], $3::text[]) AS x(e, r)
             ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason`,
            [projectId, [...last.keys()], [...last.values()], at],
          );
        }
        await audit.record(t, a.actor, a.entry, a.atMs);
      }),
    remove: (projectId: string, email: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query('DELETE FROM suppressions WHERE project_id = $1 AND email = $2', [projectId, email]);
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await audit.record(t, a.actor, a.entry, a.atMs);
        return changed;
      }),
  };
}
