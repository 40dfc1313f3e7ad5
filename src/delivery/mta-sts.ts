// MTA-STS (RFC 8461) discovery, fetch and cache. The TXT record goes through the resolver the
// delivery uses for MX (mx.ts createResolver); the policy comes over HTTPS with the RFC's limits
// (3.3): a verified certificate, no redirects, a deadline, 64 KB, text/plain. The rules about what
// a record or policy says live in mta-sts-policy.ts.
import type { Resolver } from 'node:dns/promises';
import { request, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { getCACertificates } from 'node:tls';
import type { Clock } from '../lib/clock.ts';
import { iso } from '../lib/clock.ts';
import type { JobSts } from './job.ts';
import type { DeliveryStore, StoredStsPolicy } from './store.ts';
import { parsePolicy, parseStsRecord, type Parsed, type StsPolicy } from './mta-sts-policy.ts';

export * from './mta-sts-policy.ts';

/** RFC 8461 section 3.3: senders may limit the policy body to 64 KB. */
export const POLICY_MAX_BYTES = 64 * 1024;
/** Deadline for the whole fetch (connect, TLS, headers, body). */
export const POLICY_TIMEOUT_MS = 10_000;

export type StsResolver = Pick<Resolver, 'resolveTxt' | 'resolve4' | 'resolve6'>;

export interface FetchOptions {
  resolver: StsResolver;
  clock: Clock;
  timeoutMs?: number;
  /** Extra trust anchors (PEM) added to node's: the tests' CA. */
  ca?: string[];
  /** The HTTPS port: 443, another only in tests (no fixed ports there). */
  port?: number;
}

/** A net lookup through the given resolver, so the policy host is resolved as the MX hosts are. */
function lookupThrough(resolver: StsResolver): LookupFunction {
  return (hostname, options, callback) => {
    const settle = (p: Promise<string[]>) => p.catch(() => [] as string[]);
    void Promise.all([settle(resolver.resolve6(hostname)), settle(resolver.resolve4(hostname))]).then(([v6, v4]) => {
      const all = [...v6.map((address) => ({ address, family: 6 })), ...v4.map((address) => ({ address, family: 4 }))];
      if (all.length === 0) {
        callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      } else if (options.all) callback(null, all);
      else callback(null, all[0]!.address, all[0]!.family);
    });
  };
}

/** Why a response is not a policy we may read (3.3), or undefined. */
function refusal(status: number, type: string | undefined, length: number): string | undefined {
  if (status >= 300 && status < 400) return `policy server answered a redirect (${status}), which is not followed`;
  if (status !== 200) return `policy server answered ${status}`;
  if (!/^text\/plain\s*(;|$)/i.test(type ?? '')) return `policy media type is ${type ?? 'missing'}, not text/plain`;
  if (length > POLICY_MAX_BYTES) return `policy is larger than ${POLICY_MAX_BYTES} bytes`;
  return undefined;
}

/** Fetches and parses `https://mta-sts.<domain>/.well-known/mta-sts.txt`; never throws. */
export function fetchPolicy(domain: string, opts: FetchOptions): Promise<Parsed<StsPolicy>> {
  const host = `mta-sts.${domain}`;
  const options: RequestOptions = {
    host,
    servername: host,
    port: opts.port ?? 443,
    path: '/.well-known/mta-sts.txt',
    agent: false,
    lookup: lookupThrough(opts.resolver),
    ...(opts.ca?.length ? { ca: [...getCACertificates('default'), ...opts.ca] } : {}),
  };
  return new Promise((resolve) => {
    const timer = opts.clock.setTimeout(
      () => done({ ok: false, reason: 'policy fetch timed out' }),
      opts.timeoutMs ?? POLICY_TIMEOUT_MS,
    );
    const req = request(options, (res) => {
      const problem = refusal(
        res.statusCode ?? 0,
        res.headers['content-type'],
        Number(res.headers['content-length'] ?? 0),
      );
      if (problem) return done({ ok: false, reason: problem });
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > POLICY_MAX_BYTES) done({ ok: false, reason: `policy is larger than ${POLICY_MAX_BYTES} bytes` });
        else chunks.push(c);
      });
      res.on('end', () => done(parsePolicy(Buffer.concat(chunks).toString('utf8'))));
      res.on('error', (e) => done({ ok: false, reason: `policy fetch failed: ${e.message}` }));
    });
    req.on('error', (e) => done({ ok: false, reason: `policy fetch failed: ${e.message}` }));
    req.end();
    let settled = false;
    function done(result: Parsed<StsPolicy>): void {
      if (settled) return;
      settled = true;
      timer.cancel();
      req.destroy();
      resolve(result);
    }
  });
}

/** The TXT id of `_mta-sts.<domain>`, or why there is none (no record, a DNS failure). */
export async function discoverPolicyId(domain: string, resolver: StsResolver): Promise<Parsed<{ id: string }>> {
  try {
    const records = await resolver.resolveTxt(`_mta-sts.${domain}`);
    return parseStsRecord(records.map((strings) => strings.join('')));
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return {
      ok: false,
      reason: `TXT lookup of _mta-sts.${domain} failed (${typeof code === 'string' ? code : 'error'})`,
    };
  }
}

export interface CachedPolicy {
  id: string;
  policy: StsPolicy;
  fetchedAt: number;
  expiresAt: number;
}

/** The policy that applies to a domain now, and where it came from; `policy` absent: none applies. */
export interface PolicyLookup {
  policy?: StsPolicy;
  id?: string;
  source: 'fetched' | 'cached' | 'none';
  /** What went wrong on the way (a failed fetch or lookup), even when a cached policy still applies. */
  problem?: string;
  /** The domain publishes an MTA-STS record (so a failed fetch is a policy fetch error, not "no policy"). */
  published?: boolean;
}

export interface MtaStsCache {
  /** The policy for `domain` (5.1): the cached one while its id holds, refetched when the id changes. */
  policyFor(domain: string): Promise<PolicyLookup>;
  /** The cached entry, expired or not (for `emails show`, `top` and metrics later). */
  peek(domain: string): CachedPolicy | undefined;
  /** Puts back policies kept from before a restart (their expiry still holds). */
  seed(entries: Iterable<[string, CachedPolicy]>): void;
  /** Every cached policy, expired or not. */
  entries(): [string, CachedPolicy][];
}

/** How long a domain's last discovery answers for it before its TXT record is asked again. */
export const RECHECK_MS = 5 * 60_000;
const CHECKED_MAX = 10_000;

export interface CacheOptions extends FetchOptions {
  /** RECHECK_MS unless told otherwise (0: ask every time, as the RFC's own examples do). */
  recheckMs?: number;
  /** Told of each newly fetched policy, to keep it across a restart. */
  onFetched?: (domain: string, entry: CachedPolicy) => void;
}

/**
 * An in-memory per-domain policy cache. A cached policy unexpired still applies when the TXT
 * lookup or the fetch fails (5.1), so an attacker who blocks either does not turn enforce off.
 * Concurrent lookups of one domain share one discovery.
 */
export function createMtaStsCache(opts: CacheOptions): MtaStsCache {
  const entries = new Map<string, CachedPolicy>();
  const inflight = new Map<string, Promise<PolicyLookup>>();
  // The last answer per domain, reused for `recheckMs`: the TXT record is not asked again for
  // every message (most domains publish none; a policy change is seen within the interval).
  const checked = new Map<string, { at: number; lookup: PolicyLookup }>();
  const recheckMs = opts.recheckMs ?? RECHECK_MS;

  const fresh = (domain: string) => {
    const e = entries.get(domain);
    return e && e.expiresAt > opts.clock.now() ? e : undefined;
  };
  const fromCache = (e: CachedPolicy | undefined, problem: string): PolicyLookup =>
    e ? { policy: e.policy, id: e.id, source: 'cached', problem } : { source: 'none', problem };

  async function resolveDomain(domain: string): Promise<PolicyLookup> {
    const record = await discoverPolicyId(domain, opts.resolver);
    const cached = fresh(domain);
    if (!record.ok) return fromCache(cached, record.reason);
    if (cached?.id === record.value.id)
      return { policy: cached.policy, id: cached.id, source: 'cached', published: true };
    const fetched = await fetchPolicy(domain, opts);
    if (!fetched.ok) return { ...fromCache(fresh(domain), fetched.reason), published: true };
    const now = opts.clock.now();
    const entry = {
      id: record.value.id,
      policy: fetched.value,
      fetchedAt: now,
      expiresAt: now + fetched.value.maxAge * 1000,
    };
    entries.set(domain, entry);
    opts.onFetched?.(domain, entry);
    return { policy: entry.policy, id: entry.id, source: 'fetched', published: true };
  }

  return {
    policyFor(domain) {
      const key = domain.toLowerCase().replace(/\.$/, '');
      const now = opts.clock.now();
      const recent = checked.get(key);
      // A policy in hand must not outlive its max_age, even between checks.
      if (recent && now - recent.at < recheckMs && !(recent.lookup.policy && !fresh(key)))
        return Promise.resolve(recent.lookup);
      const running = inflight.get(key);
      if (running) return running;
      const p = resolveDomain(key)
        .then((lookup) => {
          if (checked.size >= CHECKED_MAX) checked.delete(checked.keys().next().value!);
          checked.delete(key);
          checked.set(key, { at: now, lookup });
          return lookup;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, p);
      return p;
    },
    peek: (domain) => entries.get(domain.toLowerCase().replace(/\.$/, '')),
    seed(list) {
      for (const [domain, entry] of list) if (!entries.has(domain)) entries.set(domain, entry);
    },
    entries: () => [...entries],
  };
}

/**
 * The policy a delivery job carries (plain data for a worker): what the cache says for the
 * destination now. Never throws: a lookup that fails in an unexpected way is no policy, with
 * the problem said (RFC 8461 section 5: an MTA-STS failure must not stop delivery by itself).
 */
export function jobPolicyOf(cache: MtaStsCache): (domain: string) => Promise<JobSts> {
  return async (domain) => {
    try {
      const l = await cache.policyFor(domain);
      const p = l.policy;
      return {
        policy: p && l.id ? { id: l.id, mode: p.mode, mx: p.mx, max_age: p.maxAge } : null,
        problem: l.problem ?? null,
        published: l.published ?? false,
      };
    } catch (e) {
      return { policy: null, problem: `MTA-STS lookup failed: ${(e as Error).message}`, published: false };
    }
  };
}

/** A cache entry as the store keeps it, and back. */
export const storedOf = (domain: string, e: CachedPolicy): StoredStsPolicy => ({
  domain,
  policy_id: e.id,
  mode: e.policy.mode,
  mx: e.policy.mx,
  max_age: e.policy.maxAge,
  fetched_at: iso(e.fetchedAt),
  expires_at: iso(e.expiresAt),
});

const cachedOf = (r: StoredStsPolicy): [string, CachedPolicy] => [
  r.domain,
  {
    id: r.policy_id,
    policy: { mode: r.mode, mx: r.mx, maxAge: r.max_age },
    fetchedAt: Date.parse(r.fetched_at),
    expiresAt: Date.parse(r.expires_at),
  },
];

/**
 * The cache kept in the store: each fetched policy is saved, and the unexpired ones are read
 * back before the first lookup, so a restart applies the policies it knew (RFC 8461 5.1).
 */
export function createStoredStsPolicies(
  opts: Omit<CacheOptions, 'onFetched'> & {
    store: Pick<DeliveryStore, 'saveStsPolicy' | 'stsPolicies'>;
    warn: (message: string, err: unknown) => void;
  },
) {
  const cache = createMtaStsCache({
    ...opts,
    onFetched: (domain, entry) =>
      void opts.store
        .saveStsPolicy(storedOf(domain, entry))
        .catch((e: unknown) => opts.warn('MTA-STS policy not kept', e)),
  });
  const seeded = opts.store
    .stsPolicies(opts.clock.now())
    .then((rows) => cache.seed(rows.map(cachedOf)))
    .catch((e: unknown) => opts.warn('MTA-STS policies kept before the restart could not be read', e));
  const lookup = jobPolicyOf(cache);
  return {
    cache,
    policyFor: async (domain: string) => {
      await seeded;
      return lookup(domain);
    },
  };
}
