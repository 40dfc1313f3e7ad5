import type { Clock } from './clock.ts';

/**
 * Counts failures per key in fixed windows that start at a key's first failure, in
 * memory (one process; several nodes would each count their own). Used to slow down
 * guessing: failed logins per address and IP, failed SMTP AUTH per IP.
 */
export function createFailureWindows(clock: Clock, windowMs: number) {
  const windows = new Map<string, { start: number; failures: number }>();
  const live = (key: string) => {
    const w = windows.get(key);
    if (w && clock.now() - w.start < windowMs) return w;
    windows.delete(key);
    return undefined;
  };
  return {
    /** Milliseconds until `key` is below `limit` failures again, or 0 when it is now. */
    waitMs(key: string, limit: number): number {
      const w = live(key);
      return w && w.failures >= limit ? w.start + windowMs - clock.now() : 0;
    },
    recordFailure(key: string): void {
      const w = live(key) ?? { start: clock.now(), failures: 0 };
      w.failures++;
      windows.set(key, w);
      // Expired windows go once the map is large, so a stream of new keys cannot grow it for ever.
      if (windows.size > 100_000) for (const k of [...windows.keys()]) live(k);
    },
    clear(key: string): void {
      windows.delete(key);
    },
  };
}

export type FailureWindows = ReturnType<typeof createFailureWindows>;
