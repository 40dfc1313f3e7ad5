import { openResolver } from '../lib/dns.ts';
import type { Clock } from '../lib/clock.ts';

/** What an email records of SPF (the contract's spf_aligned and spf_authorized_ip). */
export interface SpfFields {
  spf_aligned: boolean;
  spf_authorized_ip: boolean;
}

/** How long one evaluation of (MAIL FROM domain, outbound address) is reused. */
export const SPF_CACHE_MS = 5 * 60_000;

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Relaxed alignment (RFC 7489 §3.1.2): one domain is the other or under it. */
function alignedRelaxed(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}

/**
 * The decision, once for both stores: the outbound address is authorised only when the
 * published SPF of the MAIL FROM domain evaluates to pass for it, and SPF is aligned only
 * when it passes for a MAIL FROM domain aligned with the From domain.
 */
export function spfFields(result: string, mailFrom: string, fromEmail: string): SpfFields {
  const pass = result === 'pass';
  return { spf_authorized_ip: pass, spf_aligned: pass && alignedRelaxed(domainOf(mailFrom), domainOf(fromEmail)) };
}

export type SpfEvaluator = (mailFrom: string, ip: string) => Promise<string>;

/**
 * Evaluates the published SPF of a MAIL FROM's domain for an address with mailauth
 * (RFC 7208, its lookup limits included), through `servers` (the system's when absent);
 * each (domain, address) result is reused for SPF_CACHE_MS, so delivery walks DNS once.
 */
export function createSpfEvaluator(servers: string[] | undefined, clock: Clock, helo: string): SpfEvaluator {
  const resolver = openResolver(servers);
  const cache = new Map<string, { until: number; result: Promise<string> }>();
  const evaluate = async (mailFrom: string, ip: string) => {
    try {
      // Loaded at the first evaluation, not at start: mailauth brings joi, a tenth of a server's start.
      const { spf } = await import('mailauth/lib/spf/index.js');
      const r = await spf({
        sender: mailFrom,
        ip,
        helo,
        mta: helo,
        resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
      });
      return r.status.result;
    } catch {
      return 'temperror';
    }
  };
  return (mailFrom, ip) => {
    const key = `${domainOf(mailFrom)}|${ip}`;
    const now = clock.now();
    for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
    const hit = cache.get(key);
    if (hit) return hit.result;
    const result = evaluate(mailFrom, ip);
    cache.set(key, { until: now + SPF_CACHE_MS, result });
    return result;
  };
}
