import { openReadOnly } from '../store/db.ts';
import { formatSnapshot } from '../top/format.ts';
import { createTopReader } from '../top/repo.ts';
import { dataDirOf, type GlobalOptions } from './context.ts';
import { print } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/**
 * svc top: on a terminal, the live Ink view (cli.md) over a read-only connection to the
 * data dir; outside one, or with --json, one snapshot as text or JSON.
 */
export async function top(_args: string[], opts: Opts): Promise<void> {
  const db = openReadOnly(dataDirOf(opts));
  try {
    const reader = createTopReader(db);
    if (!opts.json && process.stdout.isTTY && process.stdin.isTTY) {
      const { runTop } = await import('../tui/top.ts');
      await runTop(reader);
      return;
    }
    const snapshot = reader.snapshot();
    print(opts, snapshot, () => formatSnapshot(snapshot));
  } finally {
    db.close();
  }
}
