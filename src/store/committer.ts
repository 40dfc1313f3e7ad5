import type { Db } from './db.ts';
import { ioTimeout, type Timer } from '../lib/clock.ts';

export interface Committer {
  /**
   * Runs `work` inside the next group transaction and resolves once that
   * transaction is committed (on disk with synchronous=FULL). An exception in
   * `work` rolls back only its own savepoint and rejects only its own promise.
   */
  write<T>(work: (db: Db) => T): Promise<T>;
  /** Commits whatever is queued now. */
  flush(): void;
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
}

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
  // Each write runs in its own savepoint, and SQLite copies every page a savepoint
  // touches into a statement journal. By default that journal spills to a temp
  // file past 64 KiB (one or two emails), so each page became a pwrite(); in
  // memory it is a memcpy, freed when the savepoint is released (docs/performance.md).
  db.pragma('temp_store = MEMORY');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoint = db.prepare('SAVEPOINT item');
  const release = db.prepare('RELEASE item');
  const rollbackItem = db.prepare('ROLLBACK TO item');

  function flush(): void {
    timer?.cancel();
    timer = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const results: { ok: boolean; value: unknown }[] = [];
    try {
      begin.run();
      for (const p of batch) {
        savepoint.run();
        try {
          results.push({ ok: true, value: p.work(db) });
          release.run();
        } catch (e) {
          rollbackItem.run();
          release.run();
          results.push({ ok: false, value: e });
        }
      }
      commit.run();
    } catch (e) {
      if (db.inTransaction) rollback.run();
      for (const p of batch) p.reject(e);
      return;
    }
    batch.forEach((p, i) => {
      const r = results[i]!;
      if (r.ok) p.resolve(r.value);
      else p.reject(r.value);
    });
  }

  return {
    write<T>(work: (db: Db) => T): Promise<T> {
      if (closed) return Promise.reject(new Error('store is closed'));
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
        if (queue.length >= opts.maxBatch) flush();
        else timer ??= ioTimeout(flush, opts.windowMs);
      });
    },
    flush,
    close() {
      flush();
      closed = true;
    },
  };
}
