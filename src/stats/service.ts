import type { Clock } from '../lib/clock.ts';
import { parseInput } from '../validation.ts';
import { resolveRange, BUCKET_MS } from './range.ts';
import type { StatsStore } from './store.ts';
import { BOUNCED_PREFIX, STAT_TYPES, statsQuerySchema, type Stats, type StatType } from './schema.ts';

export interface StatsDeps {
  repo: StatsStore;
  clock: Clock;
}

const KEY_CHARS = { day: 10, hour: 13 } as const;
type Counts = Record<StatType, number> & { bounced_by_category: Record<string, number> };
const zeros = (): Counts => ({
  ...(Object.fromEntries(STAT_TYPES.map((t) => [t, 0])) as Record<StatType, number>),
  bounced_by_category: {},
});
const isStatType = (t: string): t is StatType => (STAT_TYPES as readonly string[]).includes(t);

/** Adds a rollup row's count to `c`: an event type's, or a bounce category's (`bounced:<category>`). */
function add(c: Counts, type: string, n: number): void {
  if (isStatType(type)) c[type] += n;
  else if (type.startsWith(BOUNCED_PREFIX)) {
    const category = type.slice(BOUNCED_PREFIX.length);
    c.bounced_by_category[category] = (c.bounced_by_category[category] ?? 0) + n;
  }
}

/** Sending statistics of a project, read from the hourly rollup. */
export function createStatsService({ repo, clock }: StatsDeps) {
  return {
    /** Counts per event type (and bounces per category) in each UTC bucket (day or hour) of the asked range, and their totals. */
    async projectStats(projectId: string, query: unknown): Promise<Stats> {
      const range = resolveRange(parseInput(statsQuerySchema, query), clock.now());
      const unit = BUCKET_MS[range.granularity];
      const hourKey = (t: number) => new Date(t).toISOString().slice(0, 13);
      const rows = await repo.countByBucket(projectId, range.granularity, hourKey(range.from), hourKey(range.to));
      const buckets = Array.from({ length: range.buckets }, (_, i) => ({
        start: new Date(range.from + i * unit).toISOString(),
        ...zeros(),
      }));
      const index = new Map(buckets.map((b, i) => [b.start.slice(0, KEY_CHARS[range.granularity]), i]));
      const totals = zeros();
      for (const r of rows) {
        const i = index.get(r.bucket);
        if (i === undefined) continue;
        add(buckets[i]!, r.type, r.n);
        add(totals, r.type, r.n);
      }
      return {
        project_id: projectId,
        granularity: range.granularity,
        from: new Date(range.from).toISOString(),
        to: new Date(range.to).toISOString(),
        totals,
        buckets,
      };
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
