import type { Clock } from '../lib/clock.ts';
import type { DoctorCheck } from './check.ts';
import { okCheck } from './check.ts';
import type { DoctorDns } from './dns.ts';
import { reversedName } from './address.ts';

export interface Blocklist {
  zone: string;
  /** What a 127.0.0.x answer means on this list; undefined for a code the list does not publish. */
  meaning(code: number): string | undefined;
  /** Where a listed address asks to be removed. */
  lookup: string;
}

/** The main DNS blocklists receivers consult (decisions.md, "svc doctor"). */
export const BLOCKLISTS: readonly Blocklist[] = [
  {
    zone: 'zen.spamhaus.org',
    // https://www.spamhaus.org/faqs/dnsbl-usage/ : return codes of zen.
    meaning: (c) =>
      c === 2
        ? 'SBL (a known spam source)'
        : c === 3
          ? 'SBL CSS (snowshoe spam)'
          : c >= 4 && c <= 7
            ? 'XBL (an infected or exploited host)'
            : c === 9
              ? 'SBL DROP (a hijacked network)'
              : c === 10 || c === 11
                ? 'PBL (an address that should not send mail directly: dynamic or end-user range)'
                : undefined,
    lookup: 'https://check.spamhaus.org/',
  },
  {
    zone: 'bl.spamcop.net',
    meaning: (c) => (c === 2 ? 'listed' : undefined),
    lookup: 'https://www.spamcop.net/bl.shtml',
  },
  {
    zone: 'b.barracudacentral.org',
    meaning: (c) => (c === 2 ? 'listed' : undefined),
    lookup: 'https://www.barracudacentral.org/lookups',
  },
];

/** The name a blocklist is asked for an address (RFC 5782 §2.1, §2.4): the address reversed, then the zone. */
export const blocklistQueryName = (address: string, zone: string): string | undefined => reversedName(address, zone);

/** What a blocklist's A answers say: listed (with the codes' meanings), refused, or not listed. */
export type Verdict =
  | { kind: 'clear' }
  | { kind: 'listed'; meanings: string[] }
  | { kind: 'refused'; answer: string }
  | { kind: 'odd'; answer: string };

/**
 * Reads a blocklist's answer (RFC 5782 §2.3: listed is an A record in 127.0.0.0/8). Answers in
 * 127.255.255.0/24 are the list refusing the query (Spamhaus: .254 a public or open resolver,
 * .255 too many queries, .252 a malformed query): the address is not known to be listed.
 */
export function readAnswer(list: Blocklist, addresses: string[]): Verdict {
  if (addresses.length === 0) return { kind: 'clear' };
  const refused = addresses.find((a) => a.startsWith('127.255.255.'));
  if (refused) return { kind: 'refused', answer: refused };
  const codes = addresses.filter((a) => a.startsWith('127.0.0.')).map((a) => Number(a.slice('127.0.0.'.length)));
  const meanings = codes.map((c) => list.meaning(c) ?? `listed (code 127.0.0.${c})`);
  if (meanings.length === 0) return { kind: 'odd', answer: addresses.join(', ') };
  return { kind: 'listed', meanings: [...new Set(meanings)] };
}

/** A verdict as a check about `address` on `list`. */
export function blocklistCheck(list: Blocklist, address: string, v: Verdict): DoctorCheck {
  const subject = `${address} on ${list.zone}`;
  switch (v.kind) {
    case 'clear':
      return okCheck('blocklist', subject, `${address} is not listed on ${list.zone}`);
    case 'listed':
      return {
        check: 'blocklist',
        subject,
        status: 'fail',
        detail: `${address} is listed on ${list.zone}: ${v.meanings.join('; ')}`,
        fix: `see why and ask for removal at ${list.lookup}, or send from another address`,
      };
    case 'refused':
      return {
        check: 'blocklist',
        subject,
        status: 'warn',
        detail: `${list.zone} refused the query (answer ${v.answer}), so whether ${address} is listed is unknown`,
        fix: `${list.zone} refuses queries from public and open resolvers: set --dns-servers to a resolver of your own (such as a local unbound)`,
      };
    case 'odd':
      return {
        check: 'blocklist',
        subject,
        status: 'warn',
        detail: `${list.zone} answered ${v.answer}, which is no blocklist code (a resolver rewriting NXDOMAIN?)`,
        fix: 'set --dns-servers to a resolver that answers NXDOMAIN as it is',
      };
  }
}

export interface BlocklistOptions {
  /** How long an answer is reused (the lists ask clients not to query more than needed). */
  ttlMs: number;
  /** The most queries to one list in a rolling hour; over it, the check says so and waits. */
  maxPerHour: number;
}

export const BLOCKLIST_DEFAULTS: BlocklistOptions = { ttlMs: 3_600_000, maxPerHour: 30 };

/**
 * Checks addresses against the blocklists, rate-limited per list and cached: an hourly run of
 * `svc serve` asks each list once per address, and answers are reused within `ttlMs`.
 */
export function createBlocklistChecker(dns: Pick<DoctorDns, 'a'>, clock: Clock, opts = BLOCKLIST_DEFAULTS) {
  const cache = new Map<string, { at: number; check: DoctorCheck }>();
  const sent = new Map<string, number[]>();

  /** Whether `zone` may be asked now; counts the query when so. */
  function allowed(zone: string, now: number): boolean {
    const recent = (sent.get(zone) ?? []).filter((t) => now - t < 3_600_000);
    if (recent.length >= opts.maxPerHour) return (sent.set(zone, recent), false);
    sent.set(zone, [...recent, now]);
    return true;
  }

  async function checkOne(list: Blocklist, address: string): Promise<DoctorCheck> {
    const key = `${list.zone} ${address}`;
    const now = clock.now();
    const hit = cache.get(key);
    if (hit && now - hit.at < opts.ttlMs) return hit.check;
    const subject = `${address} on ${list.zone}`;
    const name = blocklistQueryName(address, list.zone);
    if (!name) return { check: 'blocklist', subject, status: 'warn', detail: `${address} is no IP address`, fix: null };
    if (!allowed(list.zone, now)) {
      const detail = `not asked: ${opts.maxPerHour} queries to ${list.zone} in the last hour already`;
      return { check: 'blocklist', subject, status: 'warn', detail, fix: 'run again later' };
    }
    const l = await dns.a(name);
    // NXDOMAIN is the list's "not listed"; any other failure says nothing.
    const verdict = l.ok ? readAnswer(list, l.values) : l.temporary ? undefined : ({ kind: 'clear' } as const);
    if (!verdict) {
      const detail = `${list.zone} could not be asked about ${address}: ${l.ok ? '' : l.reason}`;
      return { check: 'blocklist', subject, status: 'warn', detail, fix: 'check the resolver (--dns-servers)' };
    }
    const check = blocklistCheck(list, address, verdict);
    cache.set(key, { at: now, check });
    return check;
  }

  return {
    /** One check per list and address, the lists asked one after another, until `signal` stops them. */
    async check(
      addresses: string[],
      lists: readonly Blocklist[] = BLOCKLISTS,
      signal?: AbortSignal,
    ): Promise<DoctorCheck[]> {
      const checks: DoctorCheck[] = [];
      for (const address of addresses)
        for (const list of lists) {
          signal?.throwIfAborted();
          checks.push(await checkOne(list, address));
        }
      return checks;
    },
  };
}

export type BlocklistChecker = ReturnType<typeof createBlocklistChecker>;
