import type { FailureWindow, FailureWindows } from '../lib/failure-windows.ts';

export interface LoginThrottleLimits {
  /** Failed logins allowed for one address from one client IP in a window. */
  perAddressAndIp: number;
  /** Failed logins allowed from one client IP in a window, whatever the addresses. */
  perIp: number;
  /**
   * Failed logins for one address (from every IP) past which the brake holds: an IP that has
   * already failed for the address is slowed down, an IP that has not still gets its try.
   */
  perAddress: number;
  /** The brake's first wait, after an IP's first failure for the address; each failure doubles it. */
  brakeFirstMs: number;
  windowMs: number;
}

// A person mistyping stays far below; a guesser gets ten tries per address from each IP per 15 minutes.
export const LOGIN_LIMITS: LoginThrottleLimits = {
  perAddressAndIp: 10,
  perIp: 30,
  perAddress: 20,
  brakeFirstMs: 5_000,
  windowMs: 15 * 60_000,
};

/**
 * The unit a client holds: an IPv4 address (also written IPv4-mapped), or the /64 of an IPv6
 * address, since one host is usually given a whole /64 and could otherwise walk through it.
 */
export function clientBlock(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (v4) return v4[1]!;
  if (!ip.includes(':')) return ip;
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** Milliseconds until `w` is below `limit` failures again (its window's end), or 0. */
const untilBelow = (w: FailureWindow | undefined, limit: number, windowMs: number) =>
  w && w.failures >= limit ? windowMs - w.elapsedMs : 0;

/**
 * The per-address brake, a slowdown: while the address is under attack (`address` at the
 * limit), an IP with `n` failures for it (`pair`) may try again `brakeFirstMs × (2ⁿ − 1)`
 * after its first one, so when it tries as soon as it may, each failure doubles its wait
 * (5 s, 10 s, 20 s …), never past its window's end or the attack's. The owner who mistypes
 * once waits seconds; a guesser gets about log₂(window / first wait) tries per window.
 */
export function brakeMs(
  address: FailureWindow | undefined,
  pair: FailureWindow | undefined,
  limits: LoginThrottleLimits,
): number {
  if (!address || address.failures < limits.perAddress || !pair) return 0;
  const budget = Math.min(limits.brakeFirstMs * (2 ** pair.failures - 1), limits.windowMs);
  return Math.max(0, Math.min(budget - pair.elapsedMs, limits.windowMs - address.elapsedMs));
}

/**
 * Counts failed logins in `failures` (windows of `limits.windowMs`; shared by the nodes on
 * PostgreSQL) as OWASP's authentication guidance has it: per address and IP together, per IP,
 * and a per-address brake that slows a guesser spread over many IPs without locking the
 * address's owner out: a correct password from an IP with no failures for it always gets in,
 * and one with a few waits seconds (brakeMs). The address counts whether or not a user has it,
 * so a 429 says nothing about who exists.
 */
export function createLoginThrottle(failures: FailureWindows, limits: LoginThrottleLimits = LOGIN_LIMITS) {
  const keysOf = (address: string, ip: string) => {
    const a = address.toLowerCase();
    const block = clientBlock(ip);
    return { pair: `pair:${a}|${block}`, ip: `ip:${block}`, address: `address:${a}` };
  };
  return {
    /** Seconds until a login for `address` from `ip` may be tried again, or 0 when it may now. */
    async retryAfter(address: string, ip: string): Promise<number> {
      const k = keysOf(address, ip);
      // One read per window: each is a round trip on PostgreSQL.
      const [pair, fromIp, attacked] = await Promise.all([
        failures.window(k.pair),
        failures.window(k.ip),
        failures.window(k.address),
      ]);
      const wait = Math.max(
        untilBelow(pair, limits.perAddressAndIp, limits.windowMs),
        untilBelow(fromIp, limits.perIp, limits.windowMs),
        brakeMs(attacked, pair, limits),
      );
      return Math.ceil(wait / 1000);
    },
    async recordFailure(address: string, ip: string): Promise<void> {
      await Promise.all(Object.values(keysOf(address, ip)).map((key) => failures.recordFailure(key)));
    },
    /**
     * A successful login clears the failures of its address from its IP. The IP's stay (one IP
     * may guess many addresses) and so do the address's (others may still be guessing it).
     */
    recordSuccess(address: string, ip: string): Promise<void> {
      return failures.clear(keysOf(address, ip).pair);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
