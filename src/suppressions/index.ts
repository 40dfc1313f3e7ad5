export { createSuppressionsRepo, type SuppressionsRepo } from './repo.ts';
export { createSuppressionsService, type SuppressionsService } from './service.ts';
export {
  SUPPRESSION_REASONS,
  listSuppressionsQuerySchema,
  type Suppression,
  type SuppressionReason,
} from './schema.ts';
