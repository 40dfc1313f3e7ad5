import {
  chmodSync,
  closeSync,
  existsSync,
  fchmodSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreOpenError } from './open-error.ts';

/** The database file inside the data dir. */
export const DATABASE_FILE = 'svc.sqlite';

// The data dir holds DKIM private keys, password hashes and API key hashes: its owner only.
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
// Any permission for the group or others counts as exposed.
const OTHERS = 0o077;

/**
 * The path of the database in `dataDir`, creating the dir (700) and an empty
 * database file (600) first when `create` is set, whatever the umask (`created`
 * says this call made the file). SQLite then gives the WAL and shared-memory
 * files the database file's mode. Without `create`, a missing database is
 * refused: a mistyped --data-dir must not become a new, empty one; nor is an
 * empty file (a first start that never finished) taken for a data dir.
 */
export function prepareDataDir(dataDir: string, create: boolean): { file: string; created: boolean } {
  const file = join(dataDir, DATABASE_FILE);
  if (existsSync(file) && (create || statSync(file).size > 0)) return { file, created: false };
  if (!create) {
    const why = existsSync(file)
      ? `its ${DATABASE_FILE} is empty: a first start that did not finish`
      : `no ${DATABASE_FILE} there`;
    throw new StoreOpenError(
      `no svc data dir at ${resolve(dataDir)} (${why}): check --data-dir, or run \`svc init\` or \`svc serve\` with it to create one`,
    );
  }
  // mkdirSync applies the umask; an explicit chmod makes the mode exact.
  if (mkdirSync(dataDir, { recursive: true, mode: DIR_MODE }) !== undefined) chmodSync(dataDir, DIR_MODE);
  return { file, created: createPrivateFile(file) };
}

/**
 * Removes a database file this process created and could not open, with its WAL and shared
 * memory: a failed first open must leave nothing that a later command takes for a data dir.
 */
export function discardNewDatabase(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      rmSync(f, { force: true });
    } catch {
      // Best effort: the error that made the open fail is the one to report.
    }
  }
}

/**
 * Creates an empty file readable by its owner only (a database, a backup, a key), whatever the
 * umask; false when it existed already.
 */
export function createPrivateFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', FILE_MODE);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false; // another process made it first
    throw e;
  }
  try {
    fchmodSync(fd, FILE_MODE);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** A path in the data dir that others may read, and the command that fixes it. */
export interface ExposedPath {
  path: string;
  mode: string;
  fix: string;
}

/** The data dir and the files in it whose mode lets the group or others in (`svc serve` warns). */
export function findExposedPaths(dataDir: string): ExposedPath[] {
  const exposed: ExposedPath[] = [];
  const check = (path: string, want: number) => {
    const mode = statSync(path).mode & 0o777;
    if (mode & OTHERS) exposed.push({ path, mode: mode.toString(8), fix: `chmod ${want.toString(8)} ${path}` });
  };
  const dir = resolve(dataDir);
  check(dir, DIR_MODE);
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.isFile()) check(join(dir, entry.name), FILE_MODE);
    else if (entry.isDirectory()) check(join(dir, entry.name), DIR_MODE);
  }
  return exposed;
}
