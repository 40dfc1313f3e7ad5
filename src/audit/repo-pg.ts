import { iso } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { PgTx } from '../store/pg-committer.ts';
import type { PgPool } from '../store/pg.ts';
import { everyRow, presentAudit, type AuditRow } from './repo.ts';
import type { Actor, AuditEntry, AuditLog } from './schema.ts';
import type { AuditStore } from './store.ts';

/**
 * Writes audit rows on PostgreSQL, inside the caller's own transaction (`tx`), so a write and
 * its audit row commit together: the SQLite writer's contract (repo.ts), async.
 */
export function createPgAuditWriter() {
  const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
  return {
    async record(tx: PgTx, actor: Actor, e: AuditEntry, atMs: number): Promise<void> {
      await tx.query(
        `INSERT INTO audit_logs (id, organization_id, project_id, actor_type, actor_id, actor_name, ip, action,
                                 target_type, target_id, before, after, created_at)
         VALUES ($1, coalesce($2, (SELECT organization_id FROM projects WHERE id = $3)), $3, $4, $5,
                 -- A user's email at the time of the change, so the log reads well after the user is gone.
                 CASE WHEN $4 = 'user' THEN (SELECT email::text FROM users WHERE id = $5) ELSE $6 END,
                 $7, $8, $9, $10, $11, $12, $13)`,
        [
          newId(atMs),
          e.organization_id ?? null,
          e.project_id ?? null,
          actor.type,
          actor.type === 'user' ? actor.user_id : null,
          actor.type === 'user' ? null : actor.os_user,
          actor.type === 'user' ? actor.ip : null,
          e.action,
          e.target_type,
          e.target_id,
          json(e.before),
          json(e.after),
          iso(atMs),
        ],
      );
    },
  };
}

export type PgAuditWriter = ReturnType<typeof createPgAuditWriter>;

/** The audit store on PostgreSQL (store.ts): the log's reader, in seq order (written order). */
export function createPgAuditRepo(pool: PgPool): AuditStore {
  const list = async (orgId: string, before: string | undefined, limit: number): Promise<AuditLog[]> =>
    (
      await pool.query<AuditRow>(
        `SELECT id, organization_id, project_id, actor_type, actor_id, actor_name, ip, action, target_type, target_id,
                before, after, created_at
         FROM audit_logs
         WHERE organization_id = $1
           AND seq < coalesce((SELECT seq FROM audit_logs WHERE id = $2), 9223372036854775807)
         ORDER BY seq DESC LIMIT $3`,
        [orgId, before ?? null, limit],
      )
    ).rows.map(presentAudit);
  return { list, iterate: (orgId, pageSize) => everyRow((before, limit) => list(orgId, before, limit), pageSize) };
}
