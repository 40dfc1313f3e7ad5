import { Presets, SingleBar } from 'cli-progress';
import { backupDatabase, restoreDatabase } from '../store/backup.ts';
import { dataDirOf, type GlobalOptions } from './context.ts';
import { print } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/** svc backup FILE: a consistent copy of the database while the server runs, with a progress bar on a TTY. */
export async function backup([file]: string[], opts: Opts): Promise<void> {
  const bar =
    !opts.json && process.stderr.isTTY
      ? new SingleBar({ format: 'backup [{bar}] {percentage}% | {value}/{total} pages' }, Presets.shades_classic)
      : undefined;
  let started = false;
  const t0 = performance.now();
  try {
    const r = await backupDatabase(dataDirOf(opts, 'backup'), file!, (done, total) => {
      if (!started) bar?.start(total, 0);
      started = true;
      bar?.setTotal(total);
      bar?.update(done);
    });
    bar?.stop();
    const seconds = Number(((performance.now() - t0) / 1000).toFixed(2));
    print(opts, { ...r, seconds }, () => `backed up to ${r.file}: ${r.bytes} bytes, ${r.pages} pages in ${seconds} s`);
  } finally {
    bar?.stop();
  }
}

/** svc restore FILE: replaces a stopped server's database with a backup. */
export async function restore([file]: string[], opts: Opts): Promise<void> {
  const r = await restoreDatabase(dataDirOf(opts, 'restore'), file!, { force: opts.force === true });
  print(opts, r, () => `restored ${file} into ${r.file} (${r.bytes} bytes, schema version ${r.schema_version})`);
}
