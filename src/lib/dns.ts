import { Resolver } from 'node:dns/promises';

/** A DNS name as svc compares it: lower case, without the root's trailing dot. */
export const normalizeHostname = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * A lookup's answer. An empty `values` is NODATA (the name exists, the type
 * does not). A failure is `temporary` when it says nothing about the records
 * (SERVFAIL, timeout, refused): only NXDOMAIN, NODATA and a mismatch count as
 * "record missing" towards unverifying a domain.
 */
export type Lookup =
  | { ok: true; values: string[] }
  | {
      ok: false;
      temporary: boolean;
      reason: string;
      /** The resolver's error code (ETIMEOUT, ESERVFAIL, ...). */ code?: string;
    };

/** The queries domain verification makes; tests and the server use the same real resolver. */
export interface DnsLookups {
  /** TXT records, each record's character-strings joined (RFC 7208 §3.3). */
  txt(name: string): Promise<Lookup>;
  /** MX exchange host names, lowercase, without the trailing dot. */
  mx(name: string): Promise<Lookup>;
  /** A and AAAA addresses. */
  addresses(name: string): Promise<Lookup>;
  /** The name a CNAME record at `name` aliases, lowercase, without the trailing dot (not followed further). */
  cname(name: string): Promise<Lookup>;
  /** Ends every lookup in flight at once (each answers a temporary failure): shutdown must not wait on DNS. */
  cancel(): void;
}

export interface DnsOptions {
  /** Per-try timeout in milliseconds. */
  timeoutMs?: number;
  tries?: number;
}

/** Why each resolver error code failed a lookup; codes missing here are temporary. */
const REASONS: Record<string, (what: string, ms: number) => string> = {
  ESERVFAIL: (what) => `the DNS server failed (SERVFAIL) looking up ${what}`,
  ETIMEOUT: (what, ms) => `no answer from the DNS server within ${ms} ms looking up ${what} (timeout)`,
  ECONNREFUSED: (what) => `the DNS server refused the connection looking up ${what}`,
  EREFUSED: (what) => `the DNS server refused the query (REFUSED) for ${what}`,
};

/** Turns a resolver error into a Lookup: NXDOMAIN is definite, NODATA is an empty answer. */
export function lookupError(e: unknown, what: string, timeoutMs: number): Lookup {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'ENODATA') return { ok: true, values: [] };
  const known = typeof code === 'string' ? { code } : {};
  if (code === 'ENOTFOUND')
    return { ok: false, temporary: false, reason: `${what} does not exist (NXDOMAIN)`, ...known };
  const reason = typeof code === 'string' ? REASONS[code] : undefined;
  const text = reason ? reason(what, timeoutMs) : `DNS lookup of ${what} failed (${String(code ?? e)})`;
  return { ok: false, temporary: true, reason: text, ...known };
}

/** A lookup's default per-try timeout: short, with few tries, so a check never hangs. */
export const DNS_TIMEOUT_MS = 2000;

/**
 * The server's resolver: on `servers` (host:port, as --dns-servers gives them; the system's
 * when absent), with the short timeout and few tries every lookup of svc uses (domain checks,
 * svc doctor, delivery's SPF evaluation).
 */
export function openResolver(servers: string[] | undefined, opts: DnsOptions = {}): Resolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? DNS_TIMEOUT_MS, tries: opts.tries ?? 2 });
  if (servers && servers.length > 0) resolver.setServers(servers);
  return resolver;
}

/** The lookups of the domain checks, on openResolver's resolver. */
export function createDnsResolver(servers: string[] | undefined, opts: DnsOptions = {}): DnsLookups {
  const timeoutMs = opts.timeoutMs ?? DNS_TIMEOUT_MS;
  const resolver = openResolver(servers, opts);
  const run = async (what: string, query: () => Promise<string[]>): Promise<Lookup> => {
    try {
      return { ok: true, values: await query() };
    } catch (e) {
      return lookupError(e, what, timeoutMs);
    }
  };
  return {
    cancel: () => resolver.cancel(),
    txt: (name) => run(`TXT ${name}`, async () => (await resolver.resolveTxt(name)).map((r) => r.join(''))),
    mx: (name) =>
      run(`MX ${name}`, async () => (await resolver.resolveMx(name)).map((r) => normalizeHostname(r.exchange))),
    cname: (name) => run(`CNAME ${name}`, async () => (await resolver.resolveCname(name)).map(normalizeHostname)),
    addresses: async (name) =>
      mergeAddresses(
        await Promise.all([
          run(`A ${name}`, () => resolver.resolve4(name)),
          run(`AAAA ${name}`, () => resolver.resolve6(name)),
        ]),
      ),
  };
}

/** A and AAAA together: any address found wins; otherwise the first failure is the answer. */
function mergeAddresses(results: Lookup[]): Lookup {
  const values = results.flatMap((r) => (r.ok ? r.values : []));
  if (values.length > 0) return { ok: true, values };
  return results.find((r) => !r.ok) ?? { ok: true, values: [] };
}
