export { createAuditRepo, createAuditWriter, type AuditWriter } from './repo.ts';
export type { AuditStore } from './store.ts';
export { listAuditQuerySchema, operator, type Actor, type Audited, type AuditEntry, type AuditLog } from './schema.ts';
export { writeAuditCsv } from './csv.ts';
export type { PgAuditWriter } from './repo-pg.ts';
