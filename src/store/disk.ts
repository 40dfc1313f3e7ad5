// A full disk is a state the server leaves by itself (decisions.md, "A full disk and a
// memory budget"). While writes fail for lack of space the store is not ready and every
// write is answered `storage_full`. SQLite alone cannot come back: the checkpoint that would
// free the WAL's space must first grow the database file, and there is no room for it. So
// the data dir keeps a `reserve` file: the first SQLITE_FULL deletes it, a TRUNCATE
// checkpoint then copies the WAL into the database and empties the WAL, and once there is
// room again for the reserve and as much beside it, the reserve is written back and writes
// are accepted again.
import { rmSync, statfsSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { ioTimeout, type Clock, type Timer } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';

/** The file a server keeps in its data dir, to be deleted when the disk is full. */
export const RESERVE_FILE = 'reserve';

/** Share of the filesystem used at which the server warns (and at which it warns again once below). */
const WARN_USED = 0.9;
const WARN_CLEARED = 0.85;
const MiB = 1024 * 1024;

/** The space of the filesystem that holds the data (bytes). */
export interface StorageSpace {
  free: number;
  total: number;
}

/** What /readyz and /metrics read of the store's storage. */
export interface StorageState {
  /** True while writes fail for lack of space. */
  full: boolean;
  /** The data dir's filesystem (SQLite); absent on PostgreSQL, whose disk is the database server's. */
  space?: StorageSpace;
}

export interface StorageWatch {
  /** Told by the committer: a write failed for lack of space. */
  noteFull(): void;
  state(): StorageState;
  /**
   * Whether writes are refused without being tried (cheap: read on every write). The disk
   * guard refuses them while full, so what `noteFull` freed (the reserve) is left to the
   * checkpoint and no write lands in it; elsewhere every write is tried.
   */
  refusing(): boolean;
  stop(): void;
}

/** The guard's filesystem calls, to be replaced in tests. */
export interface DiskFs {
  /** The space of `dir`'s filesystem. */
  space(dir: string): StorageSpace;
  /** Writes a file of `bytes` real bytes at `path`; throws when there is no room (ENOSPC). */
  writeReserve(path: string, bytes: number): Promise<void>;
}

export interface DiskGuardOptions {
  dir: string;
  logger: Logger;
  /**
   * Runs a TRUNCATE checkpoint without waiting for a lock, off the event loop (the checkpoint
   * worker: a big WAL would stall every request); true when the WAL is now empty.
   */
  truncateWal: () => Promise<boolean>;
  fs?: Partial<DiskFs>;
  /** Size of the reserve file; by default a tenth of the filesystem, at most 16 MiB. */
  reserveBytes?: number;
  /** Pause between two looks at the filesystem while all is well (default 5 s). */
  checkMs?: number;
  /** Pause between two attempts to recover while the disk is full (default 250 ms). */
  fullCheckMs?: number;
}

/** The space of `dir`'s filesystem, as an unprivileged process may use it. */
export function spaceOf(dir: string): StorageSpace {
  const s = statfsSync(dir);
  return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
}

/** Writes `bytes` of zeros to `path` (real blocks: a sparse file would hold no space). */
async function writeZeros(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'w', 0o600);
  try {
    const chunk = Buffer.alloc(Math.min(bytes, MiB));
    for (let at = 0; at < bytes; at += chunk.length) {
      await file.write(chunk, 0, Math.min(chunk.length, bytes - at), at);
    }
    await file.sync();
  } finally {
    await file.close().catch(() => {});
  }
}

/**
 * Watches the data dir's filesystem for a SQLite server: warns at 90 % used, keeps the
 * reserve file, and leaves the full state by itself once space is back (see above).
 * Its pacing is I/O, not domain time, so it runs on real timers like the committer.
 */
export function createDiskGuard(opts: DiskGuardOptions): StorageWatch {
  const fs: DiskFs = { space: spaceOf, writeReserve: writeZeros, ...opts.fs };
  const reservePath = join(opts.dir, RESERVE_FILE);
  const reserveBytes = opts.reserveBytes ?? Math.min(16 * MiB, Math.floor(fs.space(opts.dir).total / 10));
  const checkMs = opts.checkMs ?? 5000;
  const fullCheckMs = opts.fullCheckMs ?? 250;
  let full = false;
  /** Failed writes so far: a look that saw one come meanwhile does not leave the full state. */
  let failures = 0;
  let warned = false;
  let reserved = false;
  let space: StorageSpace | undefined;
  let timer: Timer | undefined;
  let checking = false;
  let stopped = false;

  function releaseReserve(): void {
    rmSync(reservePath, { force: true });
    reserved = false;
  }

  /** Writes the reserve; false when there was no room. */
  async function writeReserve(): Promise<boolean> {
    try {
      await fs.writeReserve(reservePath, reserveBytes);
      return (reserved = true);
    } catch {
      // ENOSPC: someone else took the room meanwhile.
      releaseReserve();
      return false;
    }
  }

  function warnAtHighUse(s: StorageSpace): void {
    const used = s.total > 0 ? 1 - s.free / s.total : 0;
    const fields = { data_dir: opts.dir, used_percent: Math.round(used * 1000) / 10, free_bytes: s.free };
    if (!warned && used >= WARN_USED) {
      warned = true;
      opts.logger.warn(fields, 'the data dir is over 90 % full: free space before writes fail');
    } else if (warned && used < WARN_CLEARED) {
      warned = false;
      opts.logger.info(fields, 'the data dir is below 85 % full again');
    }
  }

  /** One look: the reserve back when there is room for it and as much beside it, and leaving the full state. */
  async function check(): Promise<void> {
    const seen = failures;
    if (full) await opts.truncateWal();
    space = fs.space(opts.dir);
    warnAtHighUse(space);
    const room = space.free >= (reserved ? reserveBytes : 2 * reserveBytes);
    if (!room) return;
    if (!reserved && !(await writeReserve())) return;
    // A write failed while the reserve was being written: its room is the checkpoint's again.
    if (failures !== seen) return releaseReserve();
    if (full) {
      full = false;
      opts.logger.info({ data_dir: opts.dir, free_bytes: space.free }, 'storage: space is back, writes are accepted');
    }
  }

  /** The next look in `ms`, in place of the one armed; never two looks at once. */
  function schedule(ms: number): void {
    timer?.cancel();
    if (stopped) return;
    timer = ioTimeout(() => {
      if (checking) return;
      checking = true;
      check()
        .catch((err: unknown) => opts.logger.warn({ err }, 'storage: could not check the data dir'))
        .finally(() => {
          checking = false;
          schedule(full ? fullCheckMs : checkMs);
        });
    }, ms);
  }

  // The reserve from an earlier run counts; a missing one is written at the first look.
  reserved = hasReserve(reservePath, reserveBytes);
  schedule(0);

  return {
    noteFull() {
      failures++;
      if (full) return;
      full = true;
      // Its space is what lets the checkpoint that empties the WAL run.
      releaseReserve();
      opts.logger.warn(
        { data_dir: opts.dir },
        'storage: the disk is full, writes are refused (503 storage_full, 452 4.3.1) until space is back',
      );
      schedule(0);
    },
    state() {
      try {
        space = fs.space(opts.dir);
      } catch {
        // The data dir gone from under the server: the last look stands.
      }
      return { full, ...(space ? { space } : {}) };
    },
    refusing: () => full,
    stop() {
      stopped = true;
      timer?.cancel();
    },
  };
}

/** True when `path` is a reserve file of at least `bytes`. */
function hasReserve(path: string, bytes: number): boolean {
  try {
    return statSync(path).size >= bytes;
  } catch {
    return false;
  }
}

/**
 * PostgreSQL's disk is the database server's: svc cannot free it, only see writes fail
 * (SQLSTATE 53100). The store is not ready for `holdMs` after the last such failure; a
 * write that fails again starts the wait again.
 */
export function createStorageFlag(clock: Clock, holdMs = 10_000): StorageWatch {
  let lastFull: number | undefined;
  return {
    noteFull: () => (lastFull = clock.now()),
    state: () => ({ full: lastFull !== undefined && clock.now() - lastFull < holdMs }),
    refusing: () => false,
    stop() {},
  };
}
