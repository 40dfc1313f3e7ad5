import type { App } from '../app.ts';
import { loadConfig, type Config } from '../config/index.ts';
import { StoreOpenError } from '../store/open-error.ts';

export interface GlobalOptions {
  dataDir?: string;
  database?: string;
  json?: boolean;
  config?: string;
}

/**
 * The settings of a command that opens the store: the environment, the config file, then
 * `--data-dir` and `--database` with any other `flags` the command takes.
 */
export function storeConfigOf(opts: GlobalOptions, flags: Record<string, unknown> = {}): Config {
  return loadConfig({
    env: process.env,
    file: opts.config,
    flags: { dataDir: opts.dataDir, database: opts.database, ...flags },
  });
}

/**
 * The data dir a command that works on the SQLite file works on: --data-dir, else SVC_DATA_DIR,
 * else the config file, else ./svc-data. Refused when --database names PostgreSQL instead,
 * rather than quietly working on a file the servers do not use.
 */
export function dataDirOf(opts: GlobalOptions, command: string): string {
  const config = storeConfigOf(opts);
  if (config.database) {
    throw new StoreOpenError(
      `svc ${command} works on the data dir's SQLite file, and --database (SVC_DATABASE_URL) names PostgreSQL`,
    );
  }
  return config.dataDir;
}

/**
 * Opens the store for an admin command, runs `fn` and closes it again. `flags` are the
 * command's own settings beyond --data-dir and --database.
 * Admin commands work on the SQLite file directly; WAL lets them run beside a server, and
 * they work with the settings that server recorded (its host name, resolver and webhook URL
 * guard: server-settings.ts), so no server flag has to be repeated on a command.
 * Only `svc init` creates a missing data dir (`create`); the others refuse one.
 */
export async function withApp<T>(
  opts: GlobalOptions,
  fn: (app: App) => Promise<T>,
  { create = false, flags = {} }: { create?: boolean; flags?: Record<string, unknown> } = {},
): Promise<T> {
  // Loaded here, not at the top: `svc migrate` and `svc db copy` use this module's lighter helpers.
  const { createApp } = await import('../app.ts');
  const app = await createApp(storeConfigOf(opts, flags), { createDataDir: create, adminCommand: true });
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
