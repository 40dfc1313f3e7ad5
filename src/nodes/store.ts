// The nodes store: the `nodes` table each running `svc serve` keeps fresh (heartbeat.ts), whichever
// database runs. repo.ts (SQLite) and repo-pg.ts (PostgreSQL) implement it;
// test/contract/nodes.test.ts holds both to it.

/** A running `svc serve` as it last said (the `nodes` table). */
export interface NodeRow {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  started_at: string;
  seen_at: string;
  relay_sessions: number;
}

export interface NodesStore {
  /**
   * Writes the node's row in one transaction: inserted the first time, and after that only
   * `seen_at` and `relay_sessions` change (hostname, pid, version and started_at stay as first
   * written). Idempotent: saving the same row twice leaves one row.
   */
  save(row: NodeRow): Promise<void>;
  /** Deletes the node's row (a clean stop); a node without a row is no error. */
  remove(id: string): Promise<void>;
  /**
   * The nodes whose `seen_at` is at or after `since` (ISO), ordered by id in byte order; a node
   * seen before `since` is taken for gone and left out.
   */
  fresh(since: string): Promise<NodeRow[]>;
}
