import { Presets, SingleBar } from 'cli-progress';
import { copyToPostgres } from '../store/copy.ts';
import { storeConfigOf, type GlobalOptions } from './context.ts';
import { EXIT_USAGE, print } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/** svc db copy: the data dir (--data-dir) into PostgreSQL (--database), with a progress bar on a TTY. */
export async function dbCopy(_args: string[], opts: Opts): Promise<void> {
  const config = storeConfigOf(opts);
  const batch = Number(opts.batch);
  if (!config.database || !Number.isInteger(batch) || batch < 1) {
    process.stderr.write(
      !config.database
        ? 'error: svc db copy needs the target: --database postgres://… (SVC_DATABASE_URL)\n'
        : 'error: --batch must be a whole number of rows, 1 or more\n',
    );
    process.exitCode = EXIT_USAGE;
    return;
  }
  const bar =
    !opts.json && process.stderr.isTTY
      ? new SingleBar({ format: 'copy [{bar}] {percentage}% | {value}/{total} rows | {table}' }, Presets.shades_classic)
      : undefined;
  let started = false;
  const t0 = performance.now();
  try {
    const r = await copyToPostgres(config.dataDir, config.database, {
      batchRows: batch,
      onProgress: ({ table, copied, total }) => {
        if (!started) bar?.start(total, copied, { table });
        started = true;
        bar?.update(copied, { table });
      },
    });
    bar?.stop();
    const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
    print(
      opts,
      { ...r, seconds },
      () =>
        `${r.resumed ? 'finished the copy' : 'copied'} ${r.source} into ${r.database}: ` +
        `${r.rows} rows in ${Object.keys(r.tables).length} tables in ${seconds} s`,
    );
  } finally {
    bar?.stop();
  }
}
