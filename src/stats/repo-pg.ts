import type { PgPool } from '../store/pg.ts';
import type { Granularity } from './schema.ts';
import type { BucketCount, StatsStore } from './store.ts';

/** The stats store on PostgreSQL (store.ts): a range of email_stats' primary key, never a scan. */
export function createPgStatsRepo(pool: PgPool): StatsStore {
  // sum() of a bigint is numeric, which pg gives as a string: back to bigint, a number.
  const q: Record<Granularity, string> = {
    hour: `SELECT bucket_hour AS bucket, type, count AS n FROM email_stats
           WHERE project_id = $1 AND bucket_hour >= $2 AND bucket_hour < $3`,
    day: `SELECT substr(bucket_hour, 1, 10) AS bucket, type, sum(count)::bigint AS n FROM email_stats
          WHERE project_id = $1 AND bucket_hour >= $2 AND bucket_hour < $3 GROUP BY 1, 2`,
  };
  return {
    countByBucket: async (projectId: string, granularity: Granularity, fromHour: string, toHour: string) =>
      (await pool.query<BucketCount>(q[granularity], [projectId, fromHour, toHour])).rows,
  };
}
