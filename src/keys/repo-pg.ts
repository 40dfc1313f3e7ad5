import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import { prepared } from '../store/pg-prepared.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import { createPrincipalCache } from './repo.ts';
import type { KeyPrincipal, KeyRow, KeysStore, NewKey } from './store.ts';

/**
 * The keys store on PostgreSQL (store.ts). Each node keeps the keys it resolved while the auth
 * epoch stands still; any node's change to a key, a project or an organization moves the epoch
 * (a trigger), so a key revoked through one node is refused by every other on its next request.
 */
export function createPgKeysRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): KeysStore {
  const found = createPrincipalCache();
  return {
    // One row read (the epoch) while the key is kept.
    async findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined> {
      const epoch = await pool.query<{ n: number }>(prepared('SELECT n FROM auth_epoch WHERE id = 1'));
      found.at(epoch.rows[0]!.n);
      const kept = found.get(hash);
      if (kept) return kept;
      const r = await pool.query<KeyPrincipal>(
        `SELECT k.*, p.organization_id, p.settings AS project_settings, o.plan, o.daily_limit,
                o.rate_limit_per_second, o.dpa_accepted_at
         FROM api_keys k JOIN projects p ON p.id = k.project_id JOIN organizations o ON o.id = p.organization_id
         WHERE k.key_hash = $1`,
        [hash],
      );
      const principal = r.rows[0];
      // Kept under the epoch read before it: a change committed in between moved the epoch,
      // so the next request reads again.
      if (principal) found.set(hash, Object.freeze(principal));
      return principal;
    },
    findKeyById: async (id: string) => (await pool.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id])).rows[0],
    listKeys: async (projectId: string, includeRevoked: boolean) =>
      (
        await pool.query<KeyRow>(
          `SELECT * FROM api_keys WHERE project_id = $1 AND ($2 OR revoked_at IS NULL)
           ORDER BY created_at DESC, id COLLATE "C" DESC`,
          [projectId, includeRevoked],
        )
      ).rows,
    createKey: (k: NewKey, a: Audited) =>
      tx.write(async (t) => {
        await t.query(
          `INSERT INTO api_keys (id, project_id, name, prefix, key_hash, permissions, env, created_by, expires_at,
                                 created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            k.id,
            k.project_id,
            k.name,
            k.prefix,
            k.key_hash,
            k.permissions,
            k.env,
            k.created_by,
            k.expires_at,
            k.created_at,
          ],
        );
        await audit.record(t, a.actor, a.entry, a.atMs);
      }),
    revokeKey: (id: string, at: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await audit.record(t, a.actor, a.entry, a.atMs);
        return changed;
      }),
    touchKeys: (ids: string[], at: string) =>
      tx.write(async (t) => {
        await t.query('UPDATE api_keys SET last_used_at = $1 WHERE id = ANY($2::text[]) AND revoked_at IS NULL', [
          at,
          ids,
        ]);
      }),
  };
}
