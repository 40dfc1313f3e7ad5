import type { Db } from '../store/db.ts';
import type { Granularity } from './schema.ts';
import type { BucketCount, StatsStore } from './store.ts';

/** The stats store on SQLite (store.ts): the rollup email_stats, kept by migration 0010's trigger. */
export function createStatsRepo(db: Db): StatsStore {
  // A range of the primary key (project_id, bucket_hour, type): never a scan of emails or events.
  const q: Record<Granularity, ReturnType<typeof db.prepare<[string, string, string], BucketCount>>> = {
    hour: db.prepare(
      `SELECT bucket_hour AS bucket, type, count AS n FROM email_stats
       WHERE project_id = +? AND bucket_hour >= +? AND bucket_hour < +?`,
    ),
    day: db.prepare(
      `SELECT substr(bucket_hour, 1, 10) AS bucket, type, sum(count) AS n FROM email_stats
       WHERE project_id = +? AND bucket_hour >= +? AND bucket_hour < +? GROUP BY 1, 2`,
    ),
  };
  return {
    countByBucket: (projectId: string, granularity: Granularity, fromHour: string, toHour: string) =>
      Promise.resolve(q[granularity].all(projectId, fromHour, toHour)),
  };
}
