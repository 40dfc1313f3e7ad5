import type { Db } from '../store/db.ts';
import { iso } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { Actor, AuditEntry, AuditLog } from './schema.ts';
import type { AuditStore } from './store.ts';

export interface AuditRow {
  id: string;
  organization_id: string;
  project_id: string | null;
  actor_type: 'user' | 'cli';
  actor_id: string | null;
  actor_name: string | null;
  ip: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: string | null;
  after: string | null;
  created_at: string;
}

/**
 * Writes audit rows. `record` is synchronous and runs inside the caller's own
 * transaction (a repo's `tx.write`), so a write and its audit row commit together.
 */
export function createAuditWriter(db: Db) {
  const insert = db.prepare(
    `INSERT INTO audit_logs (id, organization_id, project_id, actor_type, actor_id, actor_name, ip, action,
                             target_type, target_id, before, after, created_at)
     VALUES (@id, coalesce(@organization_id, (SELECT organization_id FROM projects WHERE id = @project_id)),
             @project_id, @actor_type, @actor_id, @actor_name, @ip, @action, @target_type, @target_id,
             @before, @after, @created_at)`,
  );
  // A user's email at the time of the change, so the log reads well after the user is gone.
  const email = db.prepare<[string], { email: string }>('SELECT email FROM users WHERE id = ?');
  const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
  return {
    record(actor: Actor, e: AuditEntry, atMs: number): void {
      insert.run({
        id: newId(atMs),
        organization_id: e.organization_id ?? null,
        project_id: e.project_id ?? null,
        actor_type: actor.type,
        actor_id: actor.type === 'user' ? actor.user_id : null,
        actor_name: actor.type === 'user' ? (email.get(actor.user_id)?.email ?? null) : actor.os_user,
        ip: actor.type === 'user' ? actor.ip : null,
        action: e.action,
        target_type: e.target_type,
        target_id: e.target_id,
        before: json(e.before),
        after: json(e.after),
        created_at: iso(atMs),
      });
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;

/** The audit store on SQLite (store.ts): the log's reader. */
export function createAuditRepo(db: Db): AuditStore {
  // Insertion order: ids minted in the same millisecond do not sort by time.
  const page = db.prepare<[string, string | null, number], AuditRow>(
    `SELECT * FROM audit_logs
     WHERE organization_id = +? AND rowid < coalesce((SELECT rowid FROM audit_logs WHERE id = +?), 9223372036854775807)
     ORDER BY rowid DESC LIMIT +?`,
  );
  const list = (orgId: string, before: string | undefined, limit: number): Promise<AuditLog[]> =>
    Promise.resolve(page.all(orgId, before ?? null, limit).map(presentAudit));
  return { list, iterate: (orgId, pageSize) => everyRow((before, limit) => list(orgId, before, limit), pageSize) };
}

/** Every row of a log, newest first, `pageSize` at a time through its `list`, until a short page (both stores). */
export async function* everyRow(
  list: (before: string | undefined, limit: number) => Promise<AuditLog[]>,
  pageSize = 500,
): AsyncGenerator<AuditLog> {
  let before: string | undefined;
  for (;;) {
    const rows = await list(before, pageSize);
    yield* rows;
    if (rows.length < pageSize) return;
    before = rows.at(-1)!.id;
    // Let other requests run between pages of a long export.
    await new Promise((r) => setImmediate(r));
  }
}

/** An audit row as the API shows it (both stores). */
export function presentAudit(r: AuditRow): AuditLog {
  return {
    id: r.id,
    organization_id: r.organization_id,
    project_id: r.project_id,
    actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name, ip: r.ip },
    action: r.action,
    target_type: r.target_type,
    target_id: r.target_id,
    before: r.before === null ? null : (JSON.parse(r.before) as unknown),
    after: r.after === null ? null : (JSON.parse(r.after) as unknown),
    created_at: r.created_at,
  };
}
