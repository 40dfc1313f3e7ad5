import type { FailureWindows } from '../lib/failure-windows.ts';

export interface LoginThrottleLimits {
  /** Failed logins allowed for one address from one client IP in a window. */
  perAddressAndIp: number;
  /** Failed logins allowed from one client IP in a window, whatever the addresses. */
  perIp: number;
  /**
   * Failed logins for one address (from every IP) past which the brake holds: an IP that has
   * already failed for the address waits, an IP that has not still gets its try.
   */
  perAddress: number;
  windowMs: number;
}

// A person mistyping stays far below; a guesser gets ten tries per address from each IP per 15 minutes.
export const LOGIN_LIMITS: LoginThrottleLimits = {
  perAddressAndIp: 10,
  perIp: 30,
  perAddress: 20,
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

/**
 * Counts failed logins in `failures` (windows of `limits.windowMs`; shared by the nodes on
 * PostgreSQL) as OWASP's authentication guidance has it: per address and IP together, per IP,
 * and a slower per-address brake that slows a guesser spread over many IPs without locking the
 * address's owner out: a correct password from an IP with no failures for it always gets in.
 * The address counts whether or not a user has it, so a 429 says nothing about who exists.
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
      const [pair, fromIp, braked, failedHere] = await Promise.all([
        failures.waitMs(k.pair, limits.perAddressAndIp),
        failures.waitMs(k.ip, limits.perIp),
        failures.waitMs(k.address, limits.perAddress),
        failures.waitMs(k.pair, 1),
      ]);
      // The brake holds an IP while the address is under attack and this IP has failed for it.
      const brake = braked > 0 && failedHere > 0 ? Math.min(braked, failedHere) : 0;
      return Math.ceil(Math.max(pair, fromIp, brake) / 1000);
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
