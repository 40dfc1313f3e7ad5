// The stats store: what the sending statistics ask of a database, whichever runs. repo.ts
// (SQLite) and repo-pg.ts (PostgreSQL) implement it; test/contract/stats.test.ts holds both to it.
import type { Granularity } from './schema.ts';

/** The count of one event type in one bucket. */
export interface BucketCount {
  /** 'YYYY-MM-DDTHH' (hour) or 'YYYY-MM-DD' (day), UTC. */
  bucket: string;
  /** An event type, or `bounced:<category>` for the bounces of a category (migration 0025). */
  type: string;
  /** A number on both stores (never PostgreSQL's bigint string). */
  n: number;
}

export interface StatsStore {
  /**
   * The counts of a project's events per bucket and type, read from the hourly rollup
   * (email_stats, kept by a trigger on email_events), for the hours in [fromHour, toHour)
   * ('YYYY-MM-DDTHH' keys). By hour, one row per hour and type; by day, the hours of each UTC
   * day summed. A bucket or type without events has no row (the caller reads it as 0); rows come
   * in no promised order. A range of the rollup's primary key: never a scan of emails or events.
   */
  countByBucket(projectId: string, granularity: Granularity, fromHour: string, toHour: string): Promise<BucketCount[]>;
}
