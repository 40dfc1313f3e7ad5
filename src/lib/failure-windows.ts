import type { Clock } from './clock.ts';

/**
 * Failures per key in fixed windows that start at a key's first failure, to slow down
 * guessing: failed logins per address and IP, failed SMTP AUTH per IP. One SQLite server
 * counts in its memory (createFailureWindows); PostgreSQL's nodes count in the database
 * (limits/failure-windows-pg.ts), so a guesser gets the limit once, not once per node.
 */
export interface FailureWindows {
  /** Milliseconds until `key` is below `limit` failures again, or 0 when it is now. */
  waitMs(key: string, limit: number): Promise<number>;
  /** The live window of `key` (its failures, and how long ago it started), in one read. */
  window(key: string): Promise<FailureWindow | undefined>;
  recordFailure(key: string): Promise<void>;
  clear(key: string): Promise<void>;
}

export interface FailureWindow {
  failures: number;
  /** Milliseconds since the window's first failure, below the window's length. */
  elapsedMs: number;
}

/** The windows in this process's memory. */
export function createFailureWindows(clock: Clock, windowMs: number): FailureWindows {
  const windows = new Map<string, { start: number; failures: number }>();
  const live = (key: string) => {
    const w = windows.get(key);
    if (w && clock.now() - w.start < windowMs) return w;
    windows.delete(key);
    return undefined;
  };
  return {
    waitMs(key, limit) {
      const w = live(key);
      return Promise.resolve(w && w.failures >= limit ? w.start + windowMs - clock.now() : 0);
    },
    window(key) {
      const w = live(key);
      return Promise.resolve(w && { failures: w.failures, elapsedMs: clock.now() - w.start });
    },
    recordFailure(key) {
      const w = live(key) ?? { start: clock.now(), failures: 0 };
      w.failures++;
      windows.set(key, w);
      // Expired windows go once the map is large, so a stream of new keys cannot grow it for ever.
      if (windows.size > 100_000) for (const k of [...windows.keys()]) live(k);
      return Promise.resolve();
    },
    clear(key) {
      windows.delete(key);
      return Promise.resolve();
    },
  };
}
