export { createSuppressionsRepo } from './repo.ts';
export type { SuppressionsStore } from './store.ts';
export { createSuppressionsService, type SuppressionsService } from './service.ts';
export { readSuppressionCsv, writeSuppressionCsv, type CsvRow } from './csv.ts';
export {
  SUPPRESSION_REASONS,
  addSuppressionSchema,
  listSuppressionsQuerySchema,
  type Suppression,
  type SuppressionReason,
} from './schema.ts';
export type { SqliteSuppressions } from './repo.ts';
export type { PgSuppressions } from './repo-pg.ts';
export { suppressionNotice, type SuppressionChange } from './notices.ts';
