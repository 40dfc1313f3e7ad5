import Database from 'better-sqlite3';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createPrivateFile, DATABASE_FILE } from './data-dir.ts';
import { loadMigrations, openDatabase } from './db.ts';
import { StoreOpenError } from './open-error.ts';

/** A backup or restore refused for a reason the operator can fix (exit 1, code `refused`). */
export class BackupRefused extends Error {
  override name = 'BackupRefused';
}

/** The pid of a running `svc serve` on the data dir (removed when it stops). */
export const SERVER_PID_FILE = 'serve.pid';

/** Pages copied per step: 10 MiB of 4 KiB pages, so a progress bar moves. */
const PAGES_PER_STEP = 2560;
const ALL_PAGES = 0x7fffffff;

/**
 * Marks the data dir as served by this process until the returned function runs
 * (`svc restore` refuses to replace a running server's database).
 */
export function markServing(dataDir: string): () => void {
  const file = join(dataDir, SERVER_PID_FILE);
  createPrivateFile(file);
  writeFileSync(file, `${process.pid}\n`);
  return () => rmSync(file, { force: true });
}

/** The pid of a live `svc serve` on the data dir, or null (a pid file left by a killed server is ignored). */
export function runningServer(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, SERVER_PID_FILE), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
}

/**
 * A consistent online copy of the data dir's database into `target` (a new file,
 * readable by its owner only: it holds DKIM keys and hashes), with SQLite's backup
 * API, while a server may write. Writes by another process restart a backup between
 * steps, so once one restart is seen the rest is copied in one step, inside one read
 * transaction, which WAL lets writers continue beside.
 */
export async function backupDatabase(
  dataDir: string,
  target: string,
  onProgress?: (done: number, total: number) => void,
): Promise<BackupResult> {
  const source = join(dataDir, DATABASE_FILE);
  if (!existsSync(source)) throw new BackupRefused(`no svc data dir at ${resolve(dataDir)} (no ${DATABASE_FILE})`);
  if (existsSync(target)) throw new BackupRefused(`${target} exists: choose a new file name`);
  if (!existsSync(dirname(resolve(target)))) throw new BackupRefused(`the directory of ${target} does not exist`);
  createPrivateFile(target);
  const db = new Database(source, { readonly: true, timeout: 5000 });
  let lastRemaining = Infinity;
  try {
    const r = await db.backup(target, {
      progress({ totalPages, remainingPages }) {
        onProgress?.(totalPages - remainingPages, totalPages);
        const restarted = remainingPages > lastRemaining;
        lastRemaining = remainingPages;
        return restarted ? ALL_PAGES : PAGES_PER_STEP;
      },
    });
    onProgress?.(r.totalPages, r.totalPages);
  } catch (e) {
    rmSync(target, { force: true });
    throw new StoreOpenError(`the backup failed: ${(e as Error).message}`);
  } finally {
    db.close();
  }
  const check = new Database(target);
  let pages: number;
  try {
    // The copy's header says WAL, as the database's does: opened so, it would get a -wal and a
    // -shm beside it, left behind by every reader. A rollback journal keeps a backup one file.
    check.pragma('journal_mode = DELETE');
    const ok = check.pragma('quick_check', { simple: true });
    if (ok !== 'ok') throw new StoreOpenError(`the backup ${target} does not check: ${String(ok)}`);
    pages = check.pragma('page_count', { simple: true }) as number;
  } finally {
    check.close();
  }
  syncFile(target);
  return { file: resolve(target), bytes: statSync(target).size, pages };
}

export interface RestoreResult {
  file: string;
  bytes: number;
  schema_version: number;
}

/**
 * Replaces the data dir's database with the backup `source`: never under a running
 * server, never over an existing database without `force`, never with a file that is
 * not an svc database or was written by a newer svc. The copy is written beside the
 * database, synced and renamed over it (the old WAL and shared memory go first); the
 * restored database is then migrated and checked like at a start.
 */
export async function restoreDatabase(
  dataDir: string,
  source: string,
  opts: { force: boolean },
): Promise<RestoreResult> {
  const version = checkBackup(source);
  const pid = runningServer(dataDir);
  if (pid !== null) {
    throw new BackupRefused(`svc serve (pid ${pid}) is running on ${resolve(dataDir)}: stop it before restoring`);
  }
  const target = join(dataDir, DATABASE_FILE);
  if (existsSync(target) && !opts.force) {
    throw new BackupRefused(`${resolve(dataDir)} already holds a database: add --force to replace it with ${source}`);
  }
  if (!existsSync(dataDir)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
  }
  const tmp = `${target}.restoring`;
  rmSync(tmp, { force: true });
  copyFileSync(source, tmp);
  chmodSync(tmp, 0o600);
  syncFile(tmp);
  for (const suffix of ['-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
  renameSync(tmp, target);
  syncFile(dataDir);
  await openDatabase(dataDir).close();
  return { file: resolve(target), bytes: statSync(target).size, schema_version: version };
}

/** The schema version of a backup; refuses anything that is not a sound svc database this svc can read. */
function checkBackup(source: string): number {
  if (!existsSync(source)) throw new BackupRefused(`no such file: ${source}`);
  let db: Database.Database;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new BackupRefused(`${source} is not an SQLite database: ${(e as Error).message}`);
  }
  try {
    const ok = db.pragma('quick_check', { simple: true });
    if (ok !== 'ok') throw new BackupRefused(`${source} is corrupt: ${String(ok)}`);
    const svc = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'organizations'").get();
    if (!svc) throw new BackupRefused(`${source} is not an svc database`);
    const version = db.pragma('user_version', { simple: true }) as number;
    const latest = loadMigrations().at(-1)?.version ?? 0;
    if (version > latest) {
      throw new BackupRefused(`${source} has schema version ${version}, newer than this svc (${latest}): upgrade svc`);
    }
    return version;
  } catch (e) {
    if (e instanceof BackupRefused) throw e;
    throw new BackupRefused(`${source} is not a readable svc database: ${(e as Error).message}`);
  } finally {
    db.close();
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
