import { BlockList, isIP } from 'node:net';
import type { DnsLookups, Lookup } from '../lib/dns.ts';
import { normalizeHostname } from './records.ts';

/** Whether an SPF record lets our server send for the domain; a failure says why. */
export type SpfVerdict = { ok: true } | { ok: false; temporary: boolean; reason: string };

/** A term matched, did not, or could not be decided because a lookup failed for now. */
type Match = boolean | { temporary: string };

interface Context {
  domain: string;
  hostname: string;
  dns: DnsLookups;
  /** The addresses our host name resolves to, looked up once and only if a term needs them. */
  hostAddresses: () => Promise<Lookup>;
}

const QUALIFIERS: Record<string, string> = { '': 'pass', '+': 'pass', '-': 'fail', '~': 'softfail', '?': 'neutral' };

/**
 * Evaluates the mechanisms of `record` left to right, up to `all`, for our
 * host name: `a`, `mx`, `include:`, `ip4:`/`ip6:` (with CIDR) authorise it.
 * `include:` counts only when it names our host name (it is not followed), and
 * `redirect=`, `exists:` and `ptr` are not evaluated.
 */
export async function spfAuthorises(record: string, domain: string, hostname: string, dns: DnsLookups) {
  let hostLookup: Promise<Lookup> | undefined;
  const ctx: Context = { domain, hostname, dns, hostAddresses: () => (hostLookup ??= dns.addresses(hostname)) };
  let temporary: string | undefined;
  for (const term of record.trim().split(/\s+/).slice(1)) {
    const m = /^([+?~-]?)([a-z0-9]+)(?:[:]([^/]*))?(?:\/.*)?$/i.exec(term);
    if (!m) continue; // a modifier (redirect=, exp=) or something we do not read
    const [, qualifier = '', mechanism = '', arg] = m;
    if (mechanism.toLowerCase() === 'all') break;
    const match = await matches(mechanism.toLowerCase(), arg, term, ctx);
    if (typeof match === 'object') temporary ??= match.temporary;
    else if (match) return verdictOf(term, QUALIFIERS[qualifier]!, hostname);
  }
  if (temporary) return { ok: false, temporary: true, reason: temporary } satisfies SpfVerdict;
  const reason = `the SPF record does not authorise ${hostname}: add a:${hostname}`;
  return { ok: false, temporary: false, reason } satisfies SpfVerdict;
}

function verdictOf(term: string, result: string, hostname: string): SpfVerdict {
  if (result === 'pass') return { ok: true };
  return { ok: false, temporary: false, reason: `the SPF term ${term} gives ${hostname} ${result}, not pass` };
}

async function matches(mechanism: string, arg: string | undefined, term: string, ctx: Context): Promise<Match> {
  const target = normalizeHostname(arg || ctx.domain);
  switch (mechanism) {
    case 'include':
      return target === ctx.hostname;
    case 'a':
      return target === ctx.hostname || sharesAddress(await ctx.dns.addresses(target), ctx);
    case 'mx':
      return hasValue(await ctx.dns.mx(target), ctx.hostname);
    case 'ip4':
    case 'ip6':
      return coversHost(arg ?? '', term, mechanism === 'ip4' ? 'ipv4' : 'ipv6', ctx);
    default:
      return false;
  }
}

function hasValue(lookup: Lookup, value: string): Match {
  if (!lookup.ok) return lookup.temporary ? { temporary: lookup.reason } : false;
  return lookup.values.includes(value);
}

async function sharesAddress(lookup: Lookup, ctx: Context): Promise<Match> {
  if (!lookup.ok) return lookup.temporary ? { temporary: lookup.reason } : false;
  const host = await ctx.hostAddresses();
  if (!host.ok) return host.temporary ? { temporary: host.reason } : false;
  return lookup.values.some((a) => host.values.includes(a));
}

async function coversHost(arg: string, term: string, family: 'ipv4' | 'ipv6', ctx: Context): Promise<Match> {
  const bits = /\/(\d+)$/.exec(term)?.[1];
  const list = new BlockList();
  try {
    list.addSubnet(arg, Number(bits ?? (family === 'ipv4' ? 32 : 128)), family);
  } catch {
    return false; // a malformed address is a term that matches nothing
  }
  const host = await ctx.hostAddresses();
  if (!host.ok) return host.temporary ? { temporary: host.reason } : false;
  const want = family === 'ipv4' ? 4 : 6;
  return host.values.some((a) => isIP(a) === want && list.check(a, family));
}
