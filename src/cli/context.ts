import { createApp, type App } from '../app.ts';
import { loadConfig } from '../config/load.ts';

export interface GlobalOptions {
  dataDir?: string;
  json?: boolean;
  config?: string;
}

/** The data dir a command works on: --data-dir, else SVC_DATA_DIR, else the config file, else ./svc-data. */
export function dataDirOf(opts: GlobalOptions): string {
  return loadConfig({ env: process.env, file: opts.config, flags: { dataDir: opts.dataDir } }).dataDir;
}

/**
 * Opens the data dir for an admin command, runs `fn` and closes it again.
 * Admin commands work on the SQLite file directly; WAL lets them run beside a server.
 * Only `svc init` creates a missing data dir (`create`); the others refuse one.
 */
export async function withApp<T>(
  opts: GlobalOptions,
  fn: (app: App) => Promise<T>,
  { create = false }: { create?: boolean } = {},
): Promise<T> {
  const config = loadConfig({ env: process.env, file: opts.config, flags: { dataDir: opts.dataDir } });
  const app = createApp(config, { createDataDir: create });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/** Reads all of stdin (for --password-stdin and `--text -`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
