import { migrateStore } from '../store/migrate.ts';
import { storeConfigOf, type GlobalOptions } from './context.ts';
import { print } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/**
 * svc migrate: applies the migrations the database lacks, on the data dir's SQLite file or on
 * PostgreSQL (--database), and says from which version to which. `svc serve` does the same at
 * start; this lets an upgrade be done (and its time seen) before the servers are replaced.
 */
export async function migrate(_args: string[], opts: Opts): Promise<void> {
  const config = storeConfigOf(opts);
  const t0 = performance.now();
  const r = await migrateStore(config);
  const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
  print(opts, { ...r, seconds }, () =>
    r.applied.length === 0
      ? `${r.database}: schema version ${r.to}, up to date`
      : `${r.database}: schema version ${r.from} -> ${r.to} (${r.applied.join(', ')}) in ${seconds} s`,
  );
}
