import { z } from 'zod';
import { STAT_TYPES, type StatType } from '../events/index.ts';

export { STAT_TYPES, type StatType } from '../events/index.ts';

export const GRANULARITIES = ['day', 'hour'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Most buckets one request may ask for: a year by day, a month (31 days) by hour. */
export const MAX_BUCKETS: Record<Granularity, number> = { day: 366, hour: 31 * 24 };
/** The range when none is given: the last 7 days by day, the last 24 hours by hour. */
export const DEFAULT_BUCKETS: Record<Granularity, number> = { day: 7, hour: 24 };

// A date (`2026-11-01`, midnight UTC) or a date-time with its offset.
const instant = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** `?from&to&granularity` of GET .../stats: from inclusive, to exclusive, both widened to whole UTC buckets. */
export const statsQuerySchema = z.strictObject({
  from: instant.optional(),
  to: instant.optional(),
  granularity: z.enum(GRANULARITIES).default('day'),
});
export type StatsQuery = z.output<typeof statsQuerySchema>;

const counts = Object.fromEntries(STAT_TYPES.map((t) => [t, z.number().int().min(0)])) as Record<StatType, z.ZodNumber>;
const time = z.iso.datetime();
/**
 * The bounces of a bucket (or of the range) by category: the delivery classifier's categories
 * (src/delivery/classify.ts), `unknown` for a bounce without one; only the categories with a
 * count. They sum to `bounced` (the rollup counts each bounce both ways; migrations 0025 and
 * PostgreSQL's 0013 counted the bounces stored before them).
 */
const byCategory = z.record(z.string(), z.number().int().min(1));

/** The rollup's type for a bounce of `category` (both dialects' trigger write `bounced:<category>`). */
export const BOUNCED_PREFIX = 'bounced:';

/** The `data` of GET .../stats. */
export const statsOut = z.object({
  project_id: z.uuid(),
  granularity: z.enum(GRANULARITIES),
  from: time,
  to: time,
  totals: z.object({ ...counts, bounced_by_category: byCategory }),
  /** Every bucket of the range, oldest first, zeros included; `start` is the bucket's first instant (UTC). */
  buckets: z.array(z.object({ start: time, ...counts, bounced_by_category: byCategory })),
});
export type Stats = z.infer<typeof statsOut>;
