import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ioTimeout } from '../lib/clock.ts';

export type Db = Database.Database;

import { StoreOpenError } from './open-error.ts';
import { discardNewDatabase, prepareDataDir } from './data-dir.ts';

export { StoreOpenError };

// String paths, not URLs: the packaged executable's virtual filesystem (pkg) accepts only strings.
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Numbered migrations, shipped as .sql files beside this module (copied into dist/ by the build). */
export function loadMigrations(): { version: number; name: string; sql: string }[] {
  return readMigrations(MIGRATIONS_DIR);
}

/**
 * The numbered `NNNN_name.sql` files of a folder, in order (both stores' migrations). They
 * must number 1, 2, 3 … with no gap and no number twice: two branches that each added "the
 * next" migration would otherwise apply one and skip the other for good (a database records
 * only its highest version).
 */
export function readMigrations(dir: string): { version: number; name: string; sql: string }[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort();
  files.forEach((f, i) => {
    const version = Number(f.slice(0, 4));
    if (version === i + 1) return;
    const why = version === i ? `shares version ${version} with ${files[i - 1]}` : `follows version ${i}`;
    throw new Error(`migration ${f} in ${dir} ${why}: migrations number 1, 2, 3 … with no gap and no repeat`);
  });
  return files.map((f) => ({ version: Number(f.slice(0, 4)), name: f, sql: readFileSync(join(dir, f), 'utf8') }));
}

export interface OpenOptions {
  /** Create the data dir (700) and the database (600) when missing: `svc init` and `svc serve` only. */
  create?: boolean;
  /** Run periodic WAL checkpoints from a worker thread (the server does; short CLI runs need not). */
  checkpointWorker?: boolean | Partial<CheckpointerSettings>;
}

export interface CheckpointerSettings {
  /** Pause between passes while nothing is being written. */
  idleMs: number;
  /** Pause between passes while commits keep coming. */
  busyMs: number;
  /** WAL length (frames, one per page) at which the WAL is restarted from its beginning. */
  restartFrames: number;
}

// 16,384 frames of 4 KiB: the WAL is rewritten from the top once it reaches ~64 MiB.
const CHECKPOINTER: CheckpointerSettings = { idleMs: 1000, busyMs: 100, restartFrames: 16_384 };
// A WAL left longer than this (a long reader held off a restart) is cut back at its next reset.
const JOURNAL_SIZE_LIMIT = 128 * 1024 * 1024;

/**
 * Opens the SQLite file in the data dir (creating it only with `create`), applies pending
 * migrations, and refuses a database newer than this binary or a corrupt one
 * with one clear line (StoreOpenError).
 */
export function openDatabase(
  dataDir: string,
  opts: OpenOptions = {},
): { db: Db; truncateWal?: () => Promise<boolean>; close: () => Promise<void> } {
  const { file, created } = prepareDataDir(dataDir, opts.create ?? false);
  try {
    return openFile(file, opts);
  } catch (e) {
    if (created) discardNewDatabase(file);
    throw e;
  }
}

function openFile(file: string, opts: OpenOptions): { db: Db; close: () => Promise<void> } {
  let db: Db;
  try {
    db = new Database(file, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
  } catch (e) {
    throw new StoreOpenError(`cannot open database ${file}: ${(e as Error).message}`);
  }
  // FULL: a commit is on disk before we answer (a 202 means durable).
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // 4 MiB of page cache: 64 MiB cost ~50 MB of RSS under load for no throughput, 16 MiB
  // 10–20 MB more than 8, and 8 7–15 MB more than 4 under bench:deliver, with the accept's CPU
  // per request the same; a page not cached is a read from the OS's cache (docs/performance.md).
  db.pragma('cache_size = -4096');
  // The automatic checkpoint would run inside a commit on the event loop and
  // cause the tail latency; a worker thread checkpoints instead (benchmarks.md).
  if (opts.checkpointWorker) db.pragma('wal_autocheckpoint = 0');
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(String(check));
    migrate(db, file);
  } catch (e) {
    db.close();
    if (e instanceof StoreOpenError) throw e;
    throw new StoreOpenError(`database ${file} is corrupt or unreadable: ${(e as Error).message}`);
  }
  const checkpointer = opts.checkpointWorker
    ? startCheckpointer(file, { ...CHECKPOINTER, ...(opts.checkpointWorker === true ? {} : opts.checkpointWorker) })
    : undefined;
  return {
    db,
    ...(checkpointer ? { truncateWal: () => checkpointer.truncate() } : {}),
    async close() {
      if (checkpointer) await checkpointer.stop();
      if (db.open) {
        db.pragma('wal_checkpoint(TRUNCATE)');
        db.close();
      }
    },
  };
}

/**
 * `svc migrate` on the data dir: the migrations its file lacks, applied as `openDatabase` does,
 * and the versions before and after. A missing data dir is refused, as by other admin commands.
 */
export async function migrateDataDir(dataDir: string): Promise<{ from: number; to: number; applied: string[] }> {
  const reader = openReadOnly(dataDir);
  const from = reader.pragma('user_version', { simple: true }) as number;
  reader.close();
  const store = openDatabase(dataDir);
  const to = store.db.pragma('user_version', { simple: true }) as number;
  await store.close();
  const applied = loadMigrations()
    .filter((m) => m.version > from && m.version <= to)
    .map((m) => m.name);
  return { from, to, applied };
}

function migrate(db: Db, file: string): void {
  const migrations = loadMigrations();
  const latest = migrations.at(-1)?.version ?? 0;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    throw new StoreOpenError(
      `database ${file} has schema version ${current}, newer than this svc (${latest}): upgrade svc`,
    );
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}

/** The checkpoint worker thread. */
interface Checkpointer {
  /** A TRUNCATE checkpoint on the worker's connection, off the event loop; true when the WAL is now empty. */
  truncate(): Promise<boolean>;
  stop(): Promise<void>;
}

function checkpointWorkerUrl(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./checkpoint-worker.${ext}`, import.meta.url);
}

function startCheckpointer(file: string, settings: CheckpointerSettings): Checkpointer {
  const worker = new Worker(fileURLToPath(checkpointWorkerUrl()), {
    workerData: { file, ...settings },
    name: 'svc-checkpoint',
    // It allocates almost nothing (a pragma's row per pass): V8's default nursery is only RSS.
    resourceLimits: { maxYoungGenerationSizeMb: 2 },
  });
  worker.unref();
  return {
    truncate: () =>
      new Promise<boolean>((resolve) => {
        const answered = (msg: { truncated?: unknown }) => done(msg.truncated === true);
        const done = (truncated: boolean) => {
          worker.off('message', answered).off('exit', exited);
          resolve(truncated);
        };
        const exited = () => done(false);
        worker.on('message', answered).once('exit', exited);
        worker.postMessage('truncate');
      }),
    stop: async () => {
      // Keep the process alive until the worker has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await new Promise<void>((resolve) => {
        const deadline = ioTimeout(() => void worker.terminate(), 2000);
        worker.once('exit', () => {
          deadline.cancel();
          resolve();
        });
      });
    },
  };
}

/**
 * A read-only connection to the data dir's database, for views that must never block
 * or change a running server (`svc top`): WAL lets it read beside the writer.
 */
export function openReadOnly(dataDir: string): Db {
  const { file } = prepareDataDir(dataDir, false);
  try {
    return new Database(file, { readonly: true, timeout: 5000 });
  } catch (e) {
    throw new StoreOpenError(`cannot open database ${file}: ${(e as Error).message}`);
  }
}
