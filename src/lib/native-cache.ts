import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

// The packaged executable (@yao-pkg/pkg) copies a native addon (better-sqlite3's) out of its
// snapshot before loading it, into $PKG_NATIVE_CACHE_PATH or else ~/.cache, and its loader
// reads that variable before svc's code runs. A service account with no writable home
// (HOME=/nonexistent) could not open a database: the addon goes to a directory of its own
// under the temp dir instead.

const SNAPSHOT = '/snapshot/';

/** In the packaged executable, with no writable ~/.cache and no PKG_NATIVE_CACHE_PATH: extract addons elsewhere. */
export function useWritableNativeCache(): void {
  if (!('pkg' in process) || process.env.PKG_NATIVE_CACHE_PATH) return;
  const home = join(homedir(), '.cache');
  if (canWrite(join(home, 'pkg'))) return;
  const dir = join(tmpdir(), `svc-${process.getuid?.() ?? 'user'}-native`);
  // Worker threads and child processes read the variable when they start.
  process.env.PKG_NATIVE_CACHE_PATH = dir;
  const load = process.dlopen.bind(process);
  process.dlopen = (...args: Parameters<typeof process.dlopen>) => {
    if (args[1].startsWith(SNAPSHOT)) args[1] = extract(args[1], dir, home);
    // As given: an explicit undefined `flags` is an invalid mode to dlopen.
    load(...args);
  };
}

/** Whether `dir` could be made and written: its nearest existing ancestor is a directory this user may write. */
function canWrite(dir: string): boolean {
  // No mkdir to find out: a recursive mkdir under /proc (HOME=/proc/…) never returns.
  for (let d = dir; ; d = dirname(d)) {
    try {
      accessSync(d, constants.W_OK);
      return statSync(d).isDirectory();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(d) === d) return false;
    }
  }
}

/** The addon copied to `dir/pkg/<sha256>/`, as pkg lays it out; the copy is reused while its bytes match. */
function extract(filename: string, dir: string, home: string): string {
  // Native code is loaded from here: the directory must be this user's alone.
  if (!isPrivateDir(dir)) {
    throw new Error(
      `the SQLite addon cannot be extracted: ${home} is not writable and ${dir} is not a private directory ` +
        `of this user; set PKG_NATIVE_CACHE_PATH to a directory svc may write`,
    );
  }
  const bytes = readFileSync(filename);
  const hash = createHash('sha256').update(bytes).digest('hex');
  const target = join(dir, 'pkg', hash, basename(filename));
  if (sameBytes(target, hash)) return target;
  mkdirSync(join(dir, 'pkg', hash), { recursive: true, mode: 0o700 });
  // Written aside and renamed: another svc starting at the same time never loads half a file.
  const partial = `${target}.${process.pid}`;
  writeFileSync(partial, bytes, { mode: 0o700 });
  renameSync(partial, target);
  return target;
}

function isPrivateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  const st = lstatSync(dir);
  return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0;
}

function sameBytes(file: string, hash: string): boolean {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex') === hash;
  } catch {
    return false;
  }
}
