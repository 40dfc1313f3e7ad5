import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import { prepared } from '../store/pg-prepared.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import type { DkimKeyRow } from './dkim-keys.ts';
import type { DomainRow, DomainsStore, KeyWrite, NewDomainRow, PlanKeys } from './store.ts';
import type { DomainState } from './status.ts';
import { createPgNoticeWriter } from '../events/index.ts';
import type { Notice } from '../events/index.ts';

const KEYS = 'SELECT * FROM domain_dkim_keys WHERE domain_id = $1 ORDER BY created_at, id COLLATE "C"';

/** Inserts a key, or updates its state and times (the rest of a key never changes): repo.ts's saveKey. */
const SAVE_KEY = `INSERT INTO domain_dkim_keys
    (id, domain_id, selector, algorithm, private_key, public_key, state, created_at, activated_at, retire_after)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ON CONFLICT (id) DO UPDATE SET
    state = excluded.state, activated_at = excluded.activated_at, retire_after = excluded.retire_after`;

const saveKey = (t: PgTx, k: DkimKeyRow) =>
  t.query(SAVE_KEY, [
    k.id,
    k.domain_id,
    k.selector,
    k.algorithm,
    k.private_key,
    k.public_key,
    k.state,
    k.created_at,
    k.activated_at,
    k.retire_after,
  ]);

// The name is citext (COLLATE NOCASE on SQLite): as text, so rows read the same on both stores.
const DOMAIN = `SELECT id, organization_id, name::text AS name, status, dkim_selector, dkim_private_key, dkim_public_key,
                       verified_at, created_at, checks, last_checked_at, failing_since, failing_checks, warning, receiving
                FROM domains`;

/**
 * The domains store on PostgreSQL (store.ts). What SQLite's one writer
 * makes atomic, a row lock makes atomic here across nodes: the organization's row while its
 * domains are counted against the ceiling, the domain's row while a check is recorded.
 */
export function createPgDomainsRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): DomainsStore {
  const notices = createPgNoticeWriter();
  const log = (t: PgTx, a: Audited | undefined) => (a ? audit.record(t, a.actor, a.entry, a.atMs) : undefined);
  const rows = async (sql: string, params: unknown[] = []) => (await pool.query<DomainRow>(sql, params)).rows;
  const changed = (r: { rowCount: number | null }) => (r.rowCount ?? 0) > 0;
  const writeKeys = async (t: PgTx, domainId: string, k: KeyWrite) => {
    for (const row of k.save) await saveKey(t, row);
    if (k.activeRsa) {
      await t.query(
        'UPDATE domains SET dkim_selector = $2, dkim_private_key = $3, dkim_public_key = $4 WHERE id = $1',
        [domainId, k.activeRsa.selector, k.activeRsa.private_key, k.activeRsa.public_key],
      );
    }
    for (const a of k.audits) await log(t, a);
  };
  /** The domain's row, locked for the transaction, and its keys. */
  const lockedWithKeys = async (t: PgTx, id: string) => {
    const row = (await t.query<DomainRow>(`${DOMAIN} WHERE id = $1 FOR UPDATE`, [id])).rows[0];
    return row && { row, keys: (await t.query<DkimKeyRow>(KEYS, [id])).rows };
  };
  return {
    // Every LIVE send asks this.
    isVerifiedForProject: async (projectId: string, domain: string) =>
      (
        await pool.query<{ status: string }>(
          prepared(
            `SELECT d.status FROM domains d JOIN project_domains pd ON pd.domain_id = d.id
             WHERE pd.project_id = $1 AND d.name = $2`,
            [projectId, domain.toLowerCase()],
          ),
        )
      ).rows[0]?.status === 'VERIFIED',
    findDomainById: async (id: string) => (await rows(`${DOMAIN} WHERE id = $1`, [id]))[0],
    findDomainByName: async (name: string) => (await rows(`${DOMAIN} WHERE name = $1`, [name]))[0],
    // The keys as JSON: every column of domain_dkim_keys is text, so they read as KEYS reads them.
    findDomainWithKeys: async (name: string) => {
      const found = await pool.query<DomainRow & { dkim_keys: DkimKeyRow[] }>(
        `SELECT d.*, coalesce((SELECT json_agg(k ORDER BY k.created_at, k.id COLLATE "C") FROM domain_dkim_keys k
                                WHERE k.domain_id = d.id), '[]'::json) AS dkim_keys
         FROM (${DOMAIN} WHERE name = $1) d`,
        [name],
      );
      const first = found.rows[0];
      if (!first) return undefined;
      const { dkim_keys: keys, ...row } = first;
      return { row, keys };
    },
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
    listDkimKeys: async (domainId: string) => (await pool.query<DkimKeyRow>(KEYS, [domainId])).rows,
    createDomain: (
      row: NewDomainRow,
      max: number | null,
      projectId: string | undefined,
      a: Audited,
      keys: DkimKeyRow[] = [],
      keyAudits: Audited[] = [],
    ) =>
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
        for (const key of keys) await saveKey(t, key);
        if (projectId) {
          await t.query('INSERT INTO project_domains (project_id, domain_id, created_at) VALUES ($1, $2, $3)', [
            projectId,
            row.id,
            row.created_at,
          ]);
        }
        await log(t, a);
        for (const k of keyAudits) await log(t, k);
        return true;
      }),
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
    updateDkimKeys: (domainId: string, plan: PlanKeys) =>
      tx.write(async (t) => {
        const locked = await lockedWithKeys(t, domainId);
        if (!locked) return undefined;
        const k = plan(locked.keys, locked.row);
        await writeKeys(t, domainId, k);
        return k;
      }),
    recordCheck: (
      id: string,
      at: string,
      checks: string,
      next: (row: DomainRow) => DomainState,
      audited?: (before: DomainRow, after: DomainRow) => Audited,
      keys?: PlanKeys,
      notice?: (before: DomainRow, after: DomainRow) => Notice | undefined,
    ) =>
      tx.write(async (t) => {
        const locked = await lockedWithKeys(t, id);
        if (!locked) return undefined;
        const { row } = locked;
        const state = next(row);
        await t.query(
          `UPDATE domains SET status = $2, verified_at = $3, failing_since = $4, failing_checks = $5, warning = $6,
             checks = $7, last_checked_at = $8
           WHERE id = $1`,
          [id, state.status, state.verified_at, state.failing_since, state.failing_checks, state.warning, checks, at],
        );
        const k = keys?.(locked.keys, row);
        if (k) await writeKeys(t, id, k);
        const mirrored = k?.activeRsa && {
          dkim_selector: k.activeRsa.selector,
          dkim_private_key: k.activeRsa.private_key,
          dkim_public_key: k.activeRsa.public_key,
        };
        const after = { ...row, ...mirrored, ...state, checks, last_checked_at: at };
        await log(t, audited?.(row, after));
        const n = notice?.(row, after);
        if (n) {
          const bound = await t.query<{ project_id: string }>(
            'SELECT project_id FROM project_domains WHERE domain_id = $1',
            [id],
          );
          await notices.write(
            t,
            bound.rows.map((r) => r.project_id),
            [n],
          );
        }
        return { before: row, after, keys: k };
      }),
  };
}

/** The old name of the domains store on PostgreSQL, for the tests that build one. */
export type PgDomainsRepo = DomainsStore;
