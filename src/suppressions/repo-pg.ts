import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import { filterParams, type Suppression, type SuppressionFilter, type SuppressionReason } from './schema.ts';
import type { SuppressionsStore } from './store.ts';
import { iso } from '../lib/clock.ts';
import { createPgNoticeWriter } from '../events/index.ts';
import { suppressionNotice } from './notices.ts';

// `xmax = 0` on the returned row: the address was inserted, not already listed (an update of a
// listed address leaves its old version's xmax set). Only a new entry is `suppression.added`.
const UPSERT = `INSERT INTO suppressions (project_id, email, reason, created_at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason
                RETURNING (xmax = 0) AS inserted`;

/** PostgreSQL's suppressions: the store, with the upsert other repositories run in their own transactions. */
export type PgSuppressions = SuppressionsStore & {
  /**
   * One entry of addMany (store.ts) inside the caller's transaction `t`, without an audit row;
   * `sourceEmailId` is the email whose bounce or complaint adds it (the notice names it).
   */
  add(
    t: PgTx,
    projectId: string,
    email: string,
    reason: SuppressionReason,
    at: string,
    sourceEmailId?: string,
  ): Promise<void>;
  /** The reasons the project's list gives for these (lower-cased) addresses, read in `t`: one read for all. */
  reasonsIn(t: PgTx, projectId: string, emails: readonly string[]): Promise<Map<string, string>>;
};

/**
 * The suppressions store on PostgreSQL (store.ts; addresses stored lower-cased). Pages are
 * ordered by bytes (`COLLATE "C"`), as SQLite orders them, whatever the database's collation:
 * a page's `after` must mean the same on both stores.
 */
export function createPgSuppressionsRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): PgSuppressions {
  const notices = createPgNoticeWriter();
  return {
    find: async (projectId: string, email: string) =>
      (
        await pool.query<Suppression>(
          'SELECT project_id, email, reason, created_at FROM suppressions WHERE project_id = $1 AND email = $2',
          [projectId, email],
        )
      ).rows[0],
    findMany: async (projectId: string, emails: readonly string[]) =>
      emails.length === 0
        ? []
        : (
            await pool.query<Suppression>(
              `SELECT project_id, email, reason, created_at FROM suppressions
               WHERE project_id = $1 AND email = ANY($2::text[])`,
              [projectId, emails],
            )
          ).rows,
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
    add: async (t: PgTx, projectId: string, email: string, reason: SuppressionReason, at: string, source?: string) => {
      const r = await t.query<{ inserted: boolean }>(UPSERT, [projectId, email, reason, at]);
      if (!r.rows[0]?.inserted) return;
      const change = { project_id: projectId, email, reason, created_at: at, source_email_id: source };
      await notices.write(t, [projectId], [suppressionNotice('added', change, at)]);
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
          const r = await t.query<{ email: string; reason: SuppressionReason; inserted: boolean }>(
            `INSERT INTO suppressions (project_id, email, reason, created_at)
             SELECT $1, e, r, $4 FROM unnest($2::text[], $3::text[]) AS x(e, r)
             ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason
             RETURNING email, reason, (xmax = 0) AS inserted`,
            [projectId, [...last.keys()], [...last.values()], at],
          );
          const added = r.rows.filter((row) => row.inserted);
          const change = ({ email, reason }: (typeof added)[number]) => ({
            project_id: projectId,
            email,
            reason,
            created_at: at,
          });
          await notices.write(
            t,
            [projectId],
            added.map((row) => suppressionNotice('added', change(row), at)),
          );
        }
        await audit.record(t, a.actor, a.entry, a.atMs);
      }),
    remove: (projectId: string, email: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query<Suppression>(
          `DELETE FROM suppressions WHERE project_id = $1 AND email = $2
           RETURNING project_id, email, reason, created_at`,
          [projectId, email],
        );
        const gone = r.rows[0];
        if (!gone) return false;
        await audit.record(t, a.actor, a.entry, a.atMs);
        await notices.write(t, [projectId], [suppressionNotice('removed', gone, iso(a.atMs))]);
        return true;
      }),
  };
}
