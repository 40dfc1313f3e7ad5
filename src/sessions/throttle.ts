import type { FailureWindows } from '../lib/failure-windows.ts';

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
 * Counts failed logins per address and per client IP in `failures` (windows of
 * `limits.windowMs`; shared by the nodes on PostgreSQL). The address counts whether or not a
 * user has it, so a 429 says nothing about who exists.
 */
export function createLoginThrottle(failures: FailureWindows, limits: LoginThrottleLimits = LOGIN_LIMITS) {
  const keysOf = (address: string, ip: string) =>
    [
      [`address:${address.toLowerCase()}`, limits.perAddress],
      [`ip:${ip}`, limits.perIp],
    ] as const;
  return {
    /** Seconds until a login for `address` from `ip` may be tried again, or 0 when it may now. */
    async retryAfter(address: string, ip: string): Promise<number> {
      const waits = await Promise.all(keysOf(address, ip).map(([key, limit]) => failures.waitMs(key, limit)));
      return Math.ceil(Math.max(0, ...waits) / 1000);
    },
    async recordFailure(address: string, ip: string): Promise<void> {
      await Promise.all(keysOf(address, ip).map(([key]) => failures.recordFailure(key)));
    },
    /** A successful login clears its address's failures (its IP's stay: one IP may guess many addresses). */
    recordSuccess(address: string): Promise<void> {
      return failures.clear(`address:${address.toLowerCase()}`);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
