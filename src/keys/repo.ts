import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type { KeptPrincipal, KeyPrincipal, KeyRow, KeysStore, NewKey } from './store.ts';

export type { KeyPrincipal, KeyRow, NewKey } from './store.ts';

/** The keys store on SQLite (store.ts); every write commits with its audit row. */
export function createKeysRepo(db: Db, tx: Committer, audit: AuditWriter): KeysStore {
  // `= +?`: with a plain `= ?` SQLite marks this join "re-prepare when rebound", so every
  // request re-prepared it (and better-sqlite3 rebuilt its row factory): 43–70 µs instead
  // of 5–9 µs, same plan (docs/performance.md).
  const byHash = db.prepare<[string], KeyPrincipal>(
    `SELECT k.*, p.organization_id, p.settings AS project_settings, o.plan, o.daily_limit,
            o.rate_limit_per_second, o.dpa_accepted_at
     FROM api_keys k JOIN projects p ON p.id = k.project_id JOIN organizations o ON o.id = p.organization_id
     WHERE k.key_hash = +?`,
  );
  const epochNow = db.prepare<[], number>('SELECT n FROM auth_epoch WHERE id = 1').pluck();
  const found = createPrincipalCache();
  const readEpoch = () => epochNow.get()!;
  const byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  const ofProject = db.prepare<[string, number], KeyRow>(
    'SELECT * FROM api_keys WHERE project_id = +? AND (+? OR revoked_at IS NULL) ORDER BY created_at DESC, id DESC',
  );
  const insert = db.prepare(
    `INSERT INTO api_keys (id, project_id, name, prefix, key_hash, permissions, env, created_by, expires_at, created_at)
     VALUES (@id, @project_id, @name, @prefix, @key_hash, @permissions, @env, @created_by, @expires_at, @created_at)`,
  );
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND revoked_at IS NULL');
  return {
    // Found keys are kept while the auth epoch stands still: one row read per request instead
    // of a three-table join.
    findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined> {
      found.at(readEpoch());
      const kept = found.get(hash);
      if (kept) return Promise.resolve(kept);
      const principal = byHash.get(hash);
      if (principal) found.set(hash, Object.freeze(principal));
      return Promise.resolve(principal);
    },
    findKept(hash: string): KeptPrincipal | undefined {
      const principal = found.get(hash);
      return principal && { principal, check: { epoch: found.epoch()!, verified: false, read: readEpoch } };
    },
    findKeyById: (id: string) => Promise.resolve(byId.get(id)),
    listKeys: (projectId: string, includeRevoked: boolean) =>
      Promise.resolve(ofProject.all(projectId, includeRevoked ? 1 : 0)),
    createKey: (k: NewKey, a: Audited) =>
      tx.write(() => {
        insert.run(k);
        audit.record(a.actor, a.entry, a.atMs);
      }),
    revokeKey: (id: string, at: string, a: Audited) =>
      tx.write(() => {
        const changed = revoke.run(at, id).changes > 0;
        if (changed) audit.record(a.actor, a.entry, a.atMs);
        return changed;
      }),
    touchKeys: (ids: string[], at: string) => tx.write(() => ids.forEach((id) => touch.run(at, id))),
  };
}

/** At most this many resolved keys are kept; past it the oldest is dropped. */
const MAX_KEPT = 10_000;

/** Resolved keys by token hash, valid for one value of the auth epoch (both stores). */
export function createPrincipalCache() {
  const kept = new Map<string, KeyPrincipal>();
  let epoch: number | undefined;
  return {
    /** Forgets every key when the epoch moved since the keys were read. */
    at(now: number): void {
      if (now !== epoch) kept.clear();
      epoch = now;
    },
    get: (hash: string) => kept.get(hash),
    /** The epoch every kept key was read under (undefined before the first read). */
    epoch: () => epoch,
    set(hash: string, p: KeyPrincipal): void {
      if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
      kept.set(hash, p);
    },
  };
}
