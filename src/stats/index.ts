export { createStatsRepo } from './repo.ts';
export type { BucketCount, StatsStore } from './store.ts';
export { createStatsService, type StatsService } from './service.ts';
export { statsQuerySchema, statsOut, STAT_TYPES, type Stats, type StatType } from './schema.ts';
