export { createNodesRepo, FRESH_NODES_SQL } from './repo.ts';
export { createPgNodesRepo } from './repo-pg.ts';
export type { NodeRow, NodesStore } from './store.ts';
export { NODE_STALE_MS, startHeartbeat } from './heartbeat.ts';
