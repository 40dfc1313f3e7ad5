import { createApp, type App } from '../app.ts';
import { loadConfig } from '../config/load.ts';
import { StoreOpenError } from '../store/open-error.ts';

export interface GlobalOptions {
  dataDir?: string;
  database?: string;
  json?: boolean;
  config?: string;
}

/**
 * The data dir a command that works on the SQLite file works on: --data-dir, else SVC_DATA_DIR,
 * else the config file, else ./svc-data. Refused when --database names PostgreSQL instead,
 * rather than quietly working on a file the servers do not use.
 */
export function dataDirOf(opts: GlobalOptions, command: string): string {
  const config = loadConfig({
    env: process.env,
    file: opts.config,
    flags: { dataDir: opts.dataDir, database: opts.database },
  });
  if (config.database) {
    throw new StoreOpenError(
      `svc ${command} works on the data dir's SQLite file, and --database (SVC_DATABASE_URL) names PostgreSQL`,
    );
  }
  return config.dataDir;
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
  const config = loadConfig({
    env: process.env,
    file: opts.config,
    flags: { dataDir: opts.dataDir, database: opts.database },
  });
  const app = await createApp(config, { createDataDir: create });
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
