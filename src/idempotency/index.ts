export { createIdempotencySql, type IdempotencySql, type StoredResponse } from './repo.ts';
export { createPgIdempotency, type PgIdempotency } from './repo-pg.ts';
export { createIdempotencyGate, requestHash, type IdempotencyGate } from './service.ts';
