import type { Committer } from '../store/committer.ts';
import type { Db } from '../store/db.ts';
import type { NodeRow, NodesStore } from './store.ts';

export type { NodeRow } from './store.ts';

/** The nodes store on SQLite (store.ts): each server writes its own row; readers list the fresh ones. */
export function createNodesRepo(db: Db, tx: Committer): NodesStore {
  const upsert = db.prepare(
    `INSERT INTO nodes (id, hostname, pid, version, started_at, seen_at, relay_sessions)
     VALUES (@id, @hostname, @pid, @version, @started_at, @seen_at, @relay_sessions)
     ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, relay_sessions = excluded.relay_sessions`,
  );
  const remove = db.prepare('DELETE FROM nodes WHERE id = ?');
  const fresh = db.prepare<[string], NodeRow>(FRESH_NODES_SQL);
  return {
    save: (row: NodeRow) => tx.write(() => void upsert.run(row)),
    remove: (id: string) => tx.write(() => void remove.run(id)),
    fresh: (since: string) => Promise.resolve(fresh.all(since)),
  };
}

/** Nodes seen since `since` (ISO), for readers on any connection (svc top's read-only one). */
export const FRESH_NODES_SQL = 'SELECT * FROM nodes WHERE seen_at >= ? ORDER BY id';
