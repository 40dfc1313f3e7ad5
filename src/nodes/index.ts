export { createNodesRepo, FRESH_NODES_SQL, type NodeRow, type NodesRepo } from './repo.ts';
export { createPgNodesRepo } from './repo-pg.ts';
export { NODE_STALE_MS, startHeartbeat } from './heartbeat.ts';
