import { loadConfig } from '../config/load.ts';
import { openReadOnly } from '../store/db.ts';
import { formatSnapshot } from '../top/format.ts';
import { readSnapshot } from '../top/repo.ts';
import type { GlobalOptions } from './context.ts';
import { print } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/**
 * svc top: one snapshot of the data dir (read-only), as text or JSON. The live Ink view
 * (cli.md) is not built yet: on a terminal it says so and prints the snapshot.
 */
export function top(_args: string[], opts: Opts): Promise<void> {
  const { dataDir } = loadConfig({ env: process.env, file: opts.config, flags: { dataDir: opts.dataDir } });
  const db = openReadOnly(dataDir);
  let snapshot;
  try {
    snapshot = readSnapshot(db);
  } finally {
    db.close();
  }
  if (!opts.json && process.stdout.isTTY) {
    process.stderr.write('svc top: the live view is not part of this version yet; one snapshot follows\n');
  }
  print(opts, snapshot, () => formatSnapshot(snapshot));
  return Promise.resolve();
}
