import { migrateDataDir } from './db.ts';
import { migratePostgres, openPostgres, redactUrl } from './pg.ts';

export interface StoreMigration {
  store: 'sqlite' | 'postgres';
  /** The data dir, or the PostgreSQL URL without its password. */
  database: string;
  from: number;
  to: number;
  applied: string[];
}

/**
 * The migrations the configured store lacks, applied: PostgreSQL when `database` names it,
 * else the data dir's SQLite file (`svc migrate`; `svc serve` does the same at start).
 */
export async function migrateStore(config: {
  dataDir: string;
  database?: string | undefined;
}): Promise<StoreMigration> {
  if (!config.database) {
    return { store: 'sqlite', database: config.dataDir, ...(await migrateDataDir(config.dataDir)) };
  }
  const pool = await openPostgres(config.database, { max: 1 });
  try {
    return { store: 'postgres', database: redactUrl(config.database), ...(await migratePostgres(pool)) };
  } finally {
    await pool.end();
  }
}
