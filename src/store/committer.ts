import type { fdatasync } from 'node:fs';
import type { Db } from './db.ts';
import { ioTimeout, type Timer } from '../lib/clock.ts';
import { withBusyTimeout } from './busy-timeout.ts';
import { isStorageFull, storageFailureOf, storageFullError } from './errors.ts';
import { createWalSync } from './wal-sync.ts';

export interface Committer {
  /**
   * Runs `work` inside the next group transaction and resolves once that
   * transaction is committed (on disk with synchronous=FULL). An exception in
   * `work` undoes only its own writes and rejects only its own promise.
   *
   * `work` may run twice: when another item of its group fails after writing,
   * the group is rolled back and run again with a savepoint per item. So it
   * must read and write only the database (and effects it may repeat).
   */
  write<T>(work: (db: Db) => T): Promise<T>;
  /** Commits whatever is queued now. */
  flush(): void;
  /**
   * Resolves once every commit this connection can see now is on disk. With `walSync`, a group
   * is visible from its COMMIT but synced a moment later: a read that answers a client as if
   * it were durable (an idempotent replay) waits for this first. Without, at once.
   */
  durable(): Promise<void>;
  close(): void;
}

interface Pending {
  work: (db: Db) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export interface CommitterOptions {
  /** How long the first queued write waits for company. */
  windowMs: number;
  /** A group this large commits at once. */
  maxBatch: number;
  /** How long a group waits for another connection's write lock before its writes fail (default 5 s). */
  busyTimeoutMs?: number;
  /** Told of each committed group: the COMMIT's seconds (the fsync) and its writes (/metrics). */
  onCommit?: (seconds: number, writes: number) => void;
  /** Told when a group failed for lack of disk space (its writes are answered `storage_full`). */
  onStorageFull?: () => void;
  /** True while the disk is known full: a write is then answered `storage_full` without being tried. */
  refusing?: () => boolean;
  /**
   * Sync the WAL from libuv's pool (wal-sync.ts): each group commits with synchronous=NORMAL
   * and is answered once an fdatasync of the WAL begun after its COMMIT returns. The connection
   * stays FULL for every other statement. `onFailure`: told once if an fdatasync fails; every
   * write is refused from then on.
   */
  walSync?: { onFailure: (e: Error) => void; fdatasync?: typeof fdatasync };
}

/** Pause between two tries for a write lock held by another connection. */
const BUSY_RETRY_MS = 1;

/**
 * Group commit: concurrent writes share one transaction (one fsync), each
 * answered only after that transaction commits. This is what makes a durable
 * 202 cheap (architecture rule 5).
 */
// Its timer is I/O batching, not domain time, so it always runs on the real clock.
export function createCommitter(db: Db, opts: CommitterOptions = { windowMs: 2, maxBatch: 500 }): Committer {
  let queue: Pending[] = [];
  let timer: Timer | undefined;
  let closed = false;
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoint = db.prepare('SAVEPOINT item');
  const release = db.prepare('RELEASE item');
  const rollbackItem = db.prepare('ROLLBACK TO item');
  const totalChanges = db.prepare('SELECT total_changes()').pluck();
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
  /** The connection's own busy timeout, for its other statements. */
  const waitMs = Number(db.pragma('busy_timeout', { simple: true }));
  /** Since when the queued group has been waiting for another connection's write lock. */
  let busySince: number | undefined;
  // A savepoint makes SQLite copy every page it touches into a statement journal
  // (in memory, not a temp file past 64 KiB).
  db.pragma('temp_store = MEMORY');
  const wal = opts.walSync ? createWalSync(db.name, opts.walSync.onFailure, opts.walSync.fdatasync) : null;
  /** The group's COMMIT skips the fsync that `wal` then does off the event loop; FULL again after it. */
  const syncNormal = wal ? db.prepare('PRAGMA synchronous = NORMAL') : null;
  const syncFull = wal ? db.prepare('PRAGMA synchronous = FULL') : null;

  type Result = { ok: boolean; value: unknown };
  /** Whether an item of the group being run failed for lack of space (see failureOf). */
  let groupFull = false;

  /**
   * The usual case: items run back to back with no savepoint, since a savepoint
   * per item costs a copy of every page it touches (~10% of an accepted email).
   * An item that throws before it changed a row (a refused send: suppressed,
   * over its volume, a reused idempotency key) is simply answered with its
   * error. One that throws after writing cannot be undone alone: null, and the
   * group is run again with a savepoint per item.
   */
  function runOptimistic(batch: Pending[]): Result[] | null {
    const results: Result[] = [];
    for (const p of batch) {
      const before = totalChanges.get();
      try {
        results.push({ ok: true, value: p.work(db) });
      } catch (e) {
        groupFull ||= isStorageFull(e);
        if (!db.inTransaction || totalChanges.get() !== before) return null;
        results.push({ ok: false, value: e });
      }
    }
    return results;
  }

  function runIsolated(batch: Pending[]): Result[] {
    const results: Result[] = [];
    for (const p of batch) {
      savepoint.run();
      try {
        results.push({ ok: true, value: p.work(db) });
        release.run();
      } catch (e) {
        groupFull ||= isStorageFull(e);
        rollbackItem.run();
        release.run();
        results.push({ ok: false, value: e });
      }
    }
    return results;
  }

  /**
   * BEGIN IMMEDIATE without blocking the event loop: while another connection
   * holds the write lock (the checkpoint worker restarting the WAL, an admin
   * CLI run), SQLite's busy handler would sleep on this thread. Instead the
   * group stays queued and is tried again in a moment, up to busyTimeoutMs.
   */
  function tryBegin(): boolean {
    try {
      withBusyTimeout(db, 0, waitMs, () => begin.run());
      busySince = undefined;
      return true;
    } catch (e) {
      const busy = String((e as { code?: unknown }).code).startsWith('SQLITE_BUSY');
      const now = performance.now();
      busySince ??= now;
      if (!busy || now - busySince >= busyTimeoutMs) {
        busySince = undefined;
        throw e;
      }
      return false;
    }
  }

  /**
   * The error a write is answered with: a full disk is `storage_full` (503, 452 4.3.1), here
   * and nowhere else for SQLite. After SQLITE_FULL, SQLite may have rolled the whole
   * transaction back, so the group's other failures (a savepoint gone) are the same cause.
   */
  function failureOf(e: unknown, inFullGroup: boolean): unknown {
    if (!inFullGroup) return storageFailureOf(e, opts.onStorageFull);
    opts.onStorageFull?.();
    return storageFullError();
  }

  /** `wait`: block on a busy lock (closing), instead of trying again later. */
  function flush(wait = false): void {
    timer?.cancel();
    timer = undefined;
    if (queue.length === 0) return;
    if (!syncNormal) return flushGroup(wait);
    // SQLite refuses to change the safety level inside a transaction: around it, then.
    syncNormal.run();
    try {
      flushGroup(wait);
    } finally {
      syncFull!.run();
    }
  }

  function flushGroup(wait: boolean): void {
    try {
      if (wait) begin.run();
      else if (!tryBegin()) {
        timer = ioTimeout(flush, BUSY_RETRY_MS);
        return;
      }
    } catch (e) {
      const failed = queue;
      queue = [];
      const err = failureOf(e, false);
      for (const p of failed) p.reject(err);
      return;
    }
    const batch = queue;
    queue = [];
    groupFull = false;
    let results: Result[] | null;
    let t0 = 0;
    try {
      results = runOptimistic(batch);
      if (!results) {
        if (db.inTransaction) rollback.run();
        begin.run();
        results = runIsolated(batch);
      }
      t0 = performance.now();
      commit.run();
    } catch (e) {
      if (db.inTransaction) rollback.run();
      const err = failureOf(e, groupFull);
      for (const p of batch) p.reject(err);
      return;
    }
    const answer = () => {
      observe(t0, batch.length);
      batch.forEach((p, i) => {
        const r = results[i]!;
        if (r.ok) p.resolve(r.value);
        else p.reject(failureOf(r.value, false));
      });
    };
    if (!wal) return answer();
    // "A 202 means on disk": the group is answered when the WAL it was written to is synced.
    wal.after().then(answer, (e: unknown) => {
      for (const p of batch) p.reject(e);
    });
  }

  /** The group's wait for the disk (its COMMIT, and the sync after it with `walSync`), for /metrics. */
  function observe(t0: number, writes: number): void {
    // After the commit: an observer's failure must not look like a failed write.
    try {
      opts.onCommit?.((performance.now() - t0) / 1000, writes);
    } catch {
      /* metrics only */
    }
  }

  return {
    write<T>(work: (db: Db) => T): Promise<T> {
      if (closed) return Promise.reject(new Error('store is closed'));
      // "While writes fail for lack of space ... every write is answered storage_full"
      // (store/disk.ts): the reserve it released is the checkpoint's, not the next write's.
      if (opts.refusing?.()) return Promise.reject(storageFullError());
      // After a failed sync nothing is committed: it could not be acknowledged as on disk.
      const lost = wal?.failure();
      if (lost) return Promise.reject(lost);
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
        // While waiting for another connection's lock, the retry timer flushes.
        if (queue.length >= opts.maxBatch && busySince === undefined) flush();
        else timer ??= ioTimeout(flush, opts.windowMs);
      });
    },
    flush: () => flush(),
    durable: () => (wal ? wal.after() : Promise.resolve()),
    close() {
      flush(true);
      closed = true;
      wal?.close();
    },
  };
}
