import type { Clock } from '../lib/clock.ts';
import { PLAN_LIMITS, type Plan } from './plans.ts';

export interface RateResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  reset: number;
}

/**
 * Per-key request rate over one-second windows, in memory (one process owns
 * its keys' counters; several nodes would each count their own share).
 */
export function createRateLimiter(clock: Clock) {
  const windows = new Map<string, { window: number; count: number }>();
  let lastSweep = 0;
  return {
    hit(key: string, limit: number): RateResult {
      const now = clock.now();
      const window = Math.floor(now / 1000);
      if (window !== lastSweep) sweep(window);
      const w = windows.get(key);
      const entry = w && w.window === window ? w : { window, count: 0 };
      windows.set(key, entry);
      const reset = Math.max(1, Math.ceil(((window + 1) * 1000 - now) / 1000));
      if (entry.count >= limit) return { allowed: false, limit, remaining: 0, reset };
      entry.count++;
      return { allowed: true, limit, remaining: limit - entry.count, reset };
    },
  };

  function sweep(window: number): void {
    lastSweep = window;
    if (windows.size < 10_000) return;
    for (const [k, v] of windows) if (v.window < window) windows.delete(k);
  }
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** The per-key request rate (decisions.md): the server setting, else the organization's override, else the plan's; null = none. */
export function requestRateOf(
  plan: Plan,
  orgOverride: number | null,
  serverOverride: number | undefined,
): number | null {
  return serverOverride ?? orgOverride ?? PLAN_LIMITS[plan].requestsPerSecond;
}
