import { loadConfig } from '../config/load.ts';
import { migrateDataDir } from '../store/db.ts';
import { migratePostgres, openPostgres, redactUrl } from '../store/pg.ts';
import type { GlobalOptions } from './context.ts';
import { print } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/**
 * svc migrate: applies the migrations the database lacks, on the data dir's SQLite file or on
 * PostgreSQL (--database), and says from which version to which. `svc serve` does the same at
 * start; this lets an upgrade be done (and its time seen) before the servers are replaced.
 */
export async function migrate(_args: string[], opts: Opts): Promise<void> {
  const config = loadConfig({
    env: process.env,
    file: opts.config,
    flags: { dataDir: opts.dataDir, database: opts.database },
  });
  const t0 = performance.now();
  let store: string;
  let result: { from: number; to: number; applied: string[] };
  if (config.database) {
    store = redactUrl(config.database);
    const pool = await openPostgres(config.database, { max: 1 });
    try {
      result = await migratePostgres(pool);
    } finally {
      await pool.end();
    }
  } else {
    store = config.dataDir;
    result = await migrateDataDir(config.dataDir);
  }
  const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
  const kind = config.database ? 'postgres' : 'sqlite';
  print(opts, { store: kind, database: store, ...result, seconds }, () =>
    result.applied.length === 0
      ? `${store}: schema version ${result.to}, up to date`
      : `${store}: schema version ${result.from} -> ${result.to} (${result.applied.join(', ')}) in ${seconds} s`,
  );
}
