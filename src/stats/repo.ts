import type { Port } from '../store/port.ts';
import type { Db } from '../store/db.ts';
import type { Granularity } from './schema.ts';

export interface BucketCount {
  /** 'YYYY-MM-DDTHH' (hour) or 'YYYY-MM-DD' (day), UTC. */
  bucket: string;
  type: string;
  n: number;
}

/** SQL of the stats rollup (email_stats, kept by migration 0010's trigger on email_events). */
export function createStatsRepo(db: Db) {
  // A range of the primary key (project_id, bucket_hour, type): never a scan of emails or events.
  const q: Record<Granularity, ReturnType<typeof db.prepare<[string, string, string], BucketCount>>> = {
    hour: db.prepare(
      `SELECT bucket_hour AS bucket, type, count AS n FROM email_stats
       WHERE project_id = ? AND bucket_hour >= ? AND bucket_hour < ?`,
    ),
    day: db.prepare(
      `SELECT substr(bucket_hour, 1, 10) AS bucket, type, sum(count) AS n FROM email_stats
       WHERE project_id = ? AND bucket_hour >= ? AND bucket_hour < ? GROUP BY 1, 2`,
    ),
  };
  return {
    /** Counts per bucket and type of a project in [fromHour, toHour) ('YYYY-MM-DDTHH' keys); absent = 0. */
    countByBucket: (projectId: string, granularity: Granularity, fromHour: string, toHour: string) =>
      Promise.resolve(q[granularity].all(projectId, fromHour, toHour)),
  };
}

/** The stats repository behind the store seam (SQLite here, PostgreSQL in repo-pg.ts). */
export type StatsRepo = Port<ReturnType<typeof createStatsRepo>>;
