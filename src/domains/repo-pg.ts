import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/repo-pg.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import type { DomainRow, NewDomainRow } from './repo.ts';
import type { DomainState } from './status.ts';

// The name is citext (COLLATE NOCASE on SQLite): as text, so rows read the same on both stores.
const DOMAIN = `SELECT id, organization_id, name::text AS name, status, dkim_selector, dkim_private_key, dkim_public_key,
                       verified_at, created_at, checks, last_checked_at, failing_since, failing_checks, warning
                FROM domains`;

/**
 * Sending domains and their project bindings on PostgreSQL (repo.ts). What SQLite's one writer
 * makes atomic, a row lock makes atomic here across nodes: the organization's row while its
 * domains are counted against the ceiling, the domain's row while a check is recorded.
 */
export function createPgDomainsRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter) {
  const log = (t: PgTx, a: Audited | undefined) => (a ? audit.record(t, a.actor, a.entry, a.atMs) : undefined);
  const rows = async (sql: string, params: unknown[] = []) => (await pool.query<DomainRow>(sql, params)).rows;
  const changed = (r: { rowCount: number | null }) => (r.rowCount ?? 0) > 0;
  return {
    /** True when `domain` is VERIFIED and bound to the project. */
    isVerifiedForProject: async (projectId: string, domain: string) =>
      (
        await pool.query<{ status: string }>(
          `SELECT d.status FROM domains d JOIN project_domains pd ON pd.domain_id = d.id
           WHERE pd.project_id = $1 AND d.name = $2`,
          [projectId, domain.toLowerCase()],
        )
      ).rows[0]?.status === 'VERIFIED',
    findDomainById: async (id: string) => (await rows(`${DOMAIN} WHERE id = $1`, [id]))[0],
    findDomainByName: async (name: string) => (await rows(`${DOMAIN} WHERE name = $1`, [name]))[0],
    listDomains: (orgId: string) =>
      rows(`${DOMAIN} WHERE organization_id = $1 ORDER BY created_at, id COLLATE "C"`, [orgId]),
    listDomainIds: async () =>
      (await pool.query<{ id: string }>('SELECT id FROM domains ORDER BY created_at, id COLLATE "C"')).rows.map(
        (r) => r.id,
      ),
    listProjectIds: async (domainId: string) =>
      (
        await pool.query<{ project_id: string }>(
          'SELECT project_id FROM project_domains WHERE domain_id = $1 ORDER BY created_at, project_id COLLATE "C"',
          [domainId],
        )
      ).rows.map((r) => r.project_id),
    /**
     * Inserts the domain (and binds it to `projectId` when given) unless the organization
     * already has `max` domains; false at the ceiling. The organization's row is locked while
     * its domains are counted, so adds on two nodes at once cannot both pass the ceiling.
     */
    createDomain: (row: NewDomainRow, max: number | null, projectId: string | undefined, a: Audited) =>
      tx.write(async (t) => {
        // A name taken is a conflict before it is a ceiling: the insert's UNIQUE error says so.
        const taken = (await t.query('SELECT 1 FROM domains WHERE name = $1', [row.name])).rowCount;
        if (!taken && max !== null) {
          await t.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [row.organization_id]);
          const n = await t.query<{ n: number }>('SELECT count(*) AS n FROM domains WHERE organization_id = $1', [
            row.organization_id,
          ]);
          if (n.rows[0]!.n >= max) return false;
        }
        await t.query(
          `INSERT INTO domains (id, organization_id, name, dkim_selector, dkim_private_key, dkim_public_key, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            row.id,
            row.organization_id,
            row.name,
            row.dkim_selector,
            row.dkim_private_key,
            row.dkim_public_key,
            row.created_at,
          ],
        );
        if (projectId) {
          await t.query('INSERT INTO project_domains (project_id, domain_id, created_at) VALUES ($1, $2, $3)', [
            projectId,
            row.id,
            row.created_at,
          ]);
        }
        await log(t, a);
        return true;
      }),
    /** Binds; false when it already was (nothing written, nothing audited). */
    bindProject: (domainId: string, projectId: string, at: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query(
          'INSERT INTO project_domains (project_id, domain_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          [projectId, domainId, at],
        );
        if (changed(r)) await log(t, a);
        return changed(r);
      }),
    unbindProject: (domainId: string, projectId: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query('DELETE FROM project_domains WHERE project_id = $1 AND domain_id = $2', [
          projectId,
          domainId,
        ]);
        if (changed(r)) await log(t, a);
        return changed(r);
      }),
    deleteDomain: (id: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query('DELETE FROM domains WHERE id = $1', [id]);
        if (changed(r)) await log(t, a);
        return changed(r);
      }),
    /**
     * Stores a check and the state `next` computes from the row as it is inside the
     * transaction, locked, so a CLI verify and any node's periodic check cannot overwrite
     * each other's count. Undefined when the domain is gone.
     */
    recordCheck: (
      id: string,
      at: string,
      checks: string,
      next: (row: DomainRow) => DomainState,
      audited?: (before: DomainRow, after: DomainRow) => Audited,
    ) =>
      tx.write(async (t) => {
        const row = (await t.query<DomainRow>(`${DOMAIN} WHERE id = $1 FOR UPDATE`, [id])).rows[0];
        if (!row) return undefined;
        const state = next(row);
        await t.query(
          `UPDATE domains SET status = $2, verified_at = $3, failing_since = $4, failing_checks = $5, warning = $6,
             checks = $7, last_checked_at = $8
           WHERE id = $1`,
          [id, state.status, state.verified_at, state.failing_since, state.failing_checks, state.warning, checks, at],
        );
        const after = { ...row, ...state, checks, last_checked_at: at };
        await log(t, audited?.(row, after));
        return { before: row, after };
      }),
  };
}

export type PgDomainsRepo = ReturnType<typeof createPgDomainsRepo>;
