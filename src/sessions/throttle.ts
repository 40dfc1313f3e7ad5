import type { Clock } from '../lib/clock.ts';
import { createFailureWindows } from '../lib/failure-windows.ts';

export interface LoginThrottleLimits {
  /** Failed logins allowed per email address in a window. */
  perAddress: number;
  /** Failed logins allowed per client IP in a window. */
  perIp: number;
  windowMs: number;
}

// A person mistyping stays far below; a guesser gets ten tries per address per 15 minutes.
export const LOGIN_LIMITS: LoginThrottleLimits = { perAddress: 10, perIp: 30, windowMs: 15 * 60_000 };

/**
 * Counts failed logins per address and per client IP (createFailureWindows). The
 * address counts whether or not a user has it, so a 429 says nothing about who exists.
 */
export function createLoginThrottle(clock: Clock, limits: LoginThrottleLimits = LOGIN_LIMITS) {
  const failures = createFailureWindows(clock, limits.windowMs);
  const keysOf = (address: string, ip: string) =>
    [
      [`address:${address.toLowerCase()}`, limits.perAddress],
      [`ip:${ip}`, limits.perIp],
    ] as const;
  return {
    /** Seconds until a login for `address` from `ip` may be tried again, or 0 when it may now. */
    retryAfter(address: string, ip: string): number {
      let wait = 0;
      for (const [key, limit] of keysOf(address, ip)) wait = Math.max(wait, failures.waitMs(key, limit));
      return Math.ceil(wait / 1000);
    },
    recordFailure(address: string, ip: string): void {
      for (const [key] of keysOf(address, ip)) failures.recordFailure(key);
    },
    /** A successful login clears its address's failures (its IP's stay: one IP may guess many addresses). */
    recordSuccess(address: string): void {
      failures.clear(`address:${address.toLowerCase()}`);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
