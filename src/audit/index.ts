export { createAuditRepo, createAuditWriter, type AuditWriter } from './repo.ts';
export { listAuditQuerySchema, operator, type Actor, type AuditEntry, type AuditLog } from './schema.ts';
