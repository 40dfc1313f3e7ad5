import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { FailureKind } from './job.ts';

export interface Target {
  host: string;
  /** Addresses to try in order: IPv6 first, then IPv4 (an IPv6 failure falls back to IPv4). */
  addresses: string[];
}

export type Resolution = { ok: true; targets: Target[] } | { ok: false; kind: FailureKind; message: string };

const NOT_FOUND = new Set(['ENOTFOUND', 'NXDOMAIN']);
const NO_DATA = new Set(['ENODATA']);

/** A resolver on the configured servers (host:port), or the system's. */
export function createResolver(servers: string[] | null): Resolver {
  const r = new Resolver({ timeout: 3000, tries: 2 });
  if (servers?.length) r.setServers(servers);
  return r;
}

function codeOf(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'EUNKNOWN';
}

async function addressesOf(resolver: Resolver, host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  const settle = (p: Promise<string[]>) => p.catch(() => [] as string[]);
  const [v6, v4] = await Promise.all([settle(resolver.resolve6(host)), settle(resolver.resolve4(host))]);
  return [...v6, ...v4];
}

/**
 * MX hosts of `domain` in preference order with their addresses; no MX falls
 * back to the domain's own A/AAAA (RFC 5321 §5.1); a null MX (RFC 7505) or a
 * domain that does not exist is a failure the classifier treats as hard.
 */
export async function resolveDestination(resolver: Resolver, domain: string): Promise<Resolution> {
  let mx: { exchange: string; priority: number }[];
  try {
    mx = await resolver.resolveMx(domain);
  } catch (e) {
    const code = codeOf(e);
    if (NOT_FOUND.has(code)) return { ok: false, kind: 'dns-nxdomain', message: `${domain} does not exist (${code})` };
    if (!NO_DATA.has(code))
      return { ok: false, kind: 'dns-temporary', message: `MX lookup for ${domain} failed (${code})` };
    mx = [];
  }
  if (mx.length === 1 && (mx[0]!.exchange === '' || mx[0]!.exchange === '.')) {
    return { ok: false, kind: 'dns-null-mx', message: `${domain} accepts no mail (null MX, RFC 7505)` };
  }
  const hosts = mx.length ? [...mx].sort((a, b) => a.priority - b.priority).map((m) => m.exchange) : [domain];
  const targets: Target[] = [];
  for (const host of hosts) {
    const addresses = await addressesOf(resolver, host);
    if (addresses.length) targets.push({ host, addresses });
  }
  if (!targets.length)
    return { ok: false, kind: 'dns-no-address', message: `no address for the mail hosts of ${domain}` };
  return { ok: true, targets };
}

/**
 * A destination's mail hosts are looked up once per `MX_CACHE_MS` per worker
 * rather than for every message (3 queries: MX, then AAAA and A of the host).
 * Only successful answers are kept, so a failing domain is asked again on its
 * next attempt, and the cache is per resolver (a worker has one). Expiry is the
 * freshness of a network answer, not domain time: it reads the monotonic clock.
 */
const MX_CACHE_MS = 30_000;
const MX_CACHE_MAX = 10_000;
const mxCache = new WeakMap<Resolver, Map<string, { until: number; res: Resolution }>>();

export async function resolveCached(resolver: Resolver, domain: string): Promise<Resolution> {
  let cache = mxCache.get(resolver);
  if (!cache) {
    cache = new Map<string, { until: number; res: Resolution }>();
    mxCache.set(resolver, cache);
  }
  const now = performance.now();
  const hit = cache.get(domain);
  if (hit && hit.until > now) return hit.res;
  const res = await resolveDestination(resolver, domain);
  if (res.ok) {
    if (cache.size >= MX_CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.delete(domain);
    cache.set(domain, { until: now + MX_CACHE_MS, res });
  }
  return res;
}
