import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';

/**
 * The WAL of a SQLite file synced from libuv's pool instead of inside COMMIT on the event loop.
 * A group commits with synchronous=NORMAL (its frames written, not synced) and is answered only
 * once an fdatasync of the WAL begun after its COMMIT has returned: a 202 still means on disk,
 * and the thread accepts the next requests while the disk works (docs/decisions.md, "The WAL is
 * synced off the event loop").
 *
 * fdatasync of any descriptor of the file syncs every frame written to it before the call, by
 * any connection. The main connection keeps the WAL file open while the server runs (SQLite
 * deletes it only when the last connection closes, and a checkpoint truncates it in place), so
 * the descriptor opened here stays the file's.
 */
export interface WalSync {
  /** Resolves once an fdatasync of the WAL that began after this call has returned. */
  after(): Promise<void>;
  /** The failure that stopped it, once an fdatasync failed. */
  failure(): Error | null;
  /** Syncs once more on this thread, answers every waiter, and closes the descriptor. */
  close(): void;
}

/**
 * `onFailure`: told once when an fdatasync fails. What was written is then of unknown state on
 * disk (Linux may report the error once and drop the pages), so every later `after()` is refused
 * too: nothing more is acknowledged until the process restarts and SQLite recovers its file.
 */
export function createWalSync(
  databaseFile: string,
  onFailure: (e: Error) => void,
  /** The sync itself: node's, or a test's that holds or fails one. */
  sync: typeof fdatasync = fdatasync,
): WalSync {
  const path = `${databaseFile}-wal`;
  const fd = openSync(path, 'r');
  type Waiter = { resolve: () => void; reject: (e: Error) => void };
  /** Waiting for the next fdatasync: each came after the one in flight began. */
  let next: Waiter[] = [];
  let inFlight = false;
  let failed: Error | null = null;
  let closed = false;

  function fail(e: Error, waiters: Waiter[]): void {
    const first = failed === null;
    failed ??= Object.assign(new Error(`fdatasync of ${path} failed: ${e.message}`), {
      code: (e as { code?: string }).code,
    });
    for (const w of [...waiters, ...next]) w.reject(failed);
    next = [];
    if (first) onFailure(failed);
  }

  function start(): void {
    const batch = next;
    next = [];
    inFlight = true;
    sync(fd, (err) => {
      inFlight = false;
      if (err) fail(err, batch);
      else for (const w of batch) w.resolve();
      if (closed) closeSync(fd);
      else if (next.length > 0 && !failed) start();
    });
  }

  return {
    after() {
      if (failed) return Promise.reject(failed);
      if (closed) return Promise.reject(new Error('store is closed'));
      return new Promise<void>((resolve, reject) => {
        next.push({ resolve, reject });
        if (!inFlight) start();
      });
    },
    failure: () => failed,
    close() {
      if (closed) return;
      closed = true;
      try {
        fdatasyncSync(fd);
        for (const w of next) w.resolve();
        next = [];
      } catch (e) {
        fail(e as Error, []);
      }
      // An fdatasync in flight answers its own waiters, and closes the descriptor, when it returns.
      if (!inFlight) closeSync(fd);
    },
  };
}
