import type { PgPool } from '../store/pg.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import type { NodeRow, NodesStore } from './store.ts';

/** The nodes store on PostgreSQL (store.ts): each server writes its own row; readers list the fresh ones. */
export function createPgNodesRepo(pool: PgPool, tx: PgCommitter): NodesStore {
  return {
    save: (row: NodeRow) =>
      tx.write(async (t) => {
        await t.query(
          `INSERT INTO nodes (id, hostname, pid, version, started_at, seen_at, relay_sessions)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, relay_sessions = excluded.relay_sessions`,
          [row.id, row.hostname, row.pid, row.version, row.started_at, row.seen_at, row.relay_sessions],
        );
      }),
    remove: (id: string) =>
      tx.write(async (t) => {
        await t.query('DELETE FROM nodes WHERE id = $1', [id]);
      }),
    // Byte order, as SQLite orders ids, whatever the database's collation.
    fresh: async (since: string) =>
      (await pool.query<NodeRow>('SELECT * FROM nodes WHERE seen_at >= $1 ORDER BY id COLLATE "C"', [since])).rows,
  };
}
