import { isIPv4 } from 'node:net';
import { reversedName } from './address.ts';
import { createDnsResolver, type DnsLookups, type Lookup } from '../domains/index.ts';
import { DNS_TIMEOUT_MS, lookupError, openResolver } from '../lib/dns.ts';

/** The lookups of `svc doctor`: the domain checks' and, beside them, reverse (PTR) and A-only queries. */
export interface DoctorDns extends DnsLookups {
  /** The names a PTR record gives an address, lowercase, without the trailing dot. */
  ptr(address: string): Promise<Lookup>;
  /** A records only (a blocklist answers in A records). */
  a(name: string): Promise<Lookup>;
}

/** A resolver on `servers` (--dns-servers; the system's when empty) with short timeouts, as domain checks use. */
export function createDoctorDns(servers: string[], opts: { timeoutMs?: number; tries?: number } = {}): DoctorDns {
  const timeoutMs = opts.timeoutMs ?? DNS_TIMEOUT_MS;
  const lookups = createDnsResolver(servers, opts);
  const resolver = openResolver(servers, opts);
  const run = (what: string, query: () => Promise<string[]>): Promise<Lookup> =>
    query().then(
      (values) => ({ ok: true, values }),
      (e: unknown) => lookupError(e, what, timeoutMs),
    );
  return {
    ...lookups,
    cancel: () => {
      lookups.cancel();
      resolver.cancel();
    },
    // resolvePtr of the arpa name, not reverse(): reverse() reports a timeout as NXDOMAIN.
    ptr: (address) =>
      run(`PTR of ${address}`, async () =>
        (
          await resolver.resolvePtr(reversedName(address, isIPv4(address) ? 'in-addr.arpa' : 'ip6.arpa') ?? address)
        ).map((n) => n.toLowerCase().replace(/\.$/, '')),
      ),
    a: (name) => run(`A ${name}`, () => resolver.resolve4(name)),
  };
}
