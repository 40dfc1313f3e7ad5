import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, isIPv4, type LookupFunction } from 'node:net';
import type { DnsLookups } from '../domains/index.ts';
import { AppError } from '../errors.ts';

/*
 * The webhook server-side request forgery guard. decisions.md, "Webhooks":
 * "https only; resolve the host and refuse loopback, private, link-local,
 * multicast, and cloud metadata addresses, and connect to the address that was
 * checked (no second lookup)". It runs in two places: checkWebhookUrl at create,
 * update, every attempt and redelivery (the static part: scheme, credentials, IP
 * literals), and the agent's connector for every new connection (the address the
 * socket is about to use). `--allow-insecure-webhooks` lifts both, for development.
 */

/** Longest accepted webhook URL, in characters (before and after normalization). */
export const MAX_WEBHOOK_URL_CHARS = 2048;
/** Interface, "Endpoint obligations": a 2xx within 10 seconds counts as handled. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** A connection the guard refused: `reason` is addressProblem's word (or `not_https`, `not_an_ip`). */
export class UnsafeAddressError extends Error {
  readonly code = 'ERR_UNSAFE_WEBHOOK_ADDRESS';
  readonly host: string;
  readonly address: string | undefined;
  readonly reason: string;
  constructor(host: string, address: string | undefined, reason: string) {
    const what = address && address !== host ? `${host} (${address})` : host;
    super(`webhook target ${what} refused: ${describeReason(reason)}`);
    this.name = 'UnsafeAddressError';
    this.host = host;
    this.address = address;
    this.reason = reason;
  }
}

// Address ranges that may not be connected to. The most specific match wins (the
// table is sorted by prefix length), so 169.254.169.254 reads `cloud_metadata`,
// not `link_local`. `embed` is the bit offset of an IPv4 address carried inside an
// IPv6 one: the embedded address is checked too, and `reason` (if any) is what the
// range is refused for even when the embedded address is public.
const V4: [string, string][] = [
  ['0.0.0.0/8', 'unspecified'], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'], // RFC 6598 shared address space
  ['100.100.100.200/32', 'cloud_metadata'], // Alibaba Cloud
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'],
  ['169.254.169.254/32', 'cloud_metadata'], // AWS, GCP, Azure, OCI, DigitalOcean, Hetzner...
  ['169.254.170.2/32', 'cloud_metadata'], // AWS ECS task credentials
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.0.192/32', 'cloud_metadata'], // Oracle Cloud (classic)
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast, deprecated
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'broadcast'],
];
const V6: [string, string | undefined, number?][] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'ipv4_compatible', 0], // deprecated ::a.b.c.d; refused whatever it embeds
  ['::ffff:0:0/96', 'ipv4_mapped', 0], // ::ffff:a.b.c.d: refused whatever it embeds
  ['::ffff:0:0:0/96', 'ipv4_translated', 0], // SIIT, RFC 2765
  ['64:ff9b::/96', undefined, 0], // NAT64 well-known prefix: as good as the IPv4 inside
  ['64:ff9b:1::/48', 'private'], // local-use NAT64, RFC 8215
  ['100::/64', 'reserved'], // discard-only
  ['2001::/23', 'reserved'], // IETF protocol assignments (ORCHID, AMT, AS112...)
  ['2001::/32', 'teredo'], // tunnels to an obfuscated IPv4 address
  ['2001:2::/48', 'benchmarking'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', undefined, 80], // 6to4: as good as the IPv4 in bits 16..47
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'private'], // unique local
  ['fd00:ec2::254/128', 'cloud_metadata'], // AWS IMDS over IPv6
  ['fd20:ce::254/128', 'cloud_metadata'], // GCP metadata over IPv6
  ['fe80::/10', 'link_local'],
  ['fec0::/10', 'private'], // site-local, deprecated
  ['ff00::/8', 'multicast'],
];
/** Everything allocated for global unicast sits in 2000::/3; the rest of IPv6 is not a webhook. */
const GLOBAL_UNICAST = { net: 0x2000n << 112n, bits: 3 };

interface Range {
  net: bigint;
  bits: number;
  reason: string | undefined;
  embed: number | undefined;
}

const toRanges = (rows: [string, string | undefined, number?][], width: number, parse: (ip: string) => bigint) =>
  rows
    .map(([cidr, reason, embed]): Range => {
      const [ip = '', bits = ''] = cidr.split('/');
      return { net: parse(ip), bits: Number(bits) + 128 - width, reason, embed };
    })
    .sort((a, b) => b.bits - a.bits);

/** Dotted quad (as isIPv4 accepts it: no octal, no hex) to a number. */
function v4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

/** IPv6 text (as isIPv6 accepts it, without a zone) to 128 bits. */
function v6ToBigInt(ip: string): bigint {
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  let text = ip;
  if (dotted) {
    const n = v4ToBigInt(dotted[1]!);
    text = `${ip.slice(0, dotted.index)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

// IPv4 ranges are kept in the low 32 bits of a 128-bit space, so one matcher serves both.
const V4_RANGES = toRanges(V4, 32, v4ToBigInt);
const V6_RANGES = toRanges(V6, 128, v6ToBigInt);

const inRange = (addr: bigint, net: bigint, bits: number) => addr >> BigInt(128 - bits) === net >> BigInt(128 - bits);

function v4Problem(addr: bigint): string | undefined {
  return V4_RANGES.find((r) => inRange(addr, r.net, r.bits))?.reason;
}

function v6Problem(addr: bigint): string | undefined {
  const range = V6_RANGES.find((r) => inRange(addr, r.net, r.bits));
  if (range?.embed !== undefined) return v4Problem((addr >> BigInt(range.embed)) & 0xffffffffn) ?? range.reason;
  if (range) return range.reason;
  return inRange(addr, GLOBAL_UNICAST.net, GLOBAL_UNICAST.bits) ? undefined : 'reserved';
}

/**
 * Why `ip` may not be connected to as a webhook target (a short machine word such
 * as `loopback`, `private`, `cloud_metadata`), or undefined when it is a public
 * address. Anything that is not a plain IPv4 or IPv6 address is refused.
 */
export function addressProblem(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 0) return 'not_an_ip';
  // A zone (fe80::1%eth0) only means something on a link: no public target has one.
  if (ip.includes('%')) return 'scoped_address';
  return family === 4 ? v4Problem(v4ToBigInt(ip)) : v6Problem(v6ToBigInt(ip));
}

/** A reason in words, for messages. */
const TEXT: Record<string, string> = {
  not_https: 'the URL must use https',
  credentials_in_url: 'the URL must not carry a user name or password',
  invalid_url: 'not an absolute URL with a host',
  too_long: `the URL is longer than ${MAX_WEBHOOK_URL_CHARS} characters`,
  not_an_ip: 'the answer is not an IP address',
  scoped_address: 'an address with a zone',
  unspecified: 'an unspecified (0.0.0.0 or ::) address',
  cgnat: 'a carrier-grade NAT (shared) address',
  broadcast: 'the broadcast address',
  cloud_metadata: 'a cloud metadata address',
  teredo: 'a Teredo tunnel address',
  ipv4_mapped: 'an IPv4-mapped IPv6 address',
  ipv4_compatible: 'an IPv4-compatible IPv6 address',
  ipv4_translated: 'an IPv4-translated IPv6 address',
};
const describeReason = (reason: string) => TEXT[reason] ?? `a ${reason.replace('_', '-')} address`;

function refuse(reason: string): AppError {
  const message = `The webhook url is refused: ${describeReason(reason)}`;
  // `field`/`reason` for callers; `fields` is the contract's shape of a 422.
  return new AppError('request_validation_failed', message, {
    field: 'url',
    reason,
    fields: [{ field: 'url', message, code: reason }],
  });
}

/** RFC 6761 §6.3: localhost and its subdomains are loopback, whatever DNS says. */
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/.test(host);

/**
 * Checks a webhook URL before it is stored or used (create, update, every attempt,
 * redelivery) and returns it parsed: store and call `href`, which is what was
 * checked. WHATWG parsing normalizes the IPv4 spellings (2130706433, 0177.0.0.1,
 * 0x7f.1, 127.1 all become 127.0.0.1), so an IP literal is checked here at once;
 * a name is checked at connection time by the agent's lookup.
 * Throws 422 request_validation_failed with `details.reason`.
 */
export function checkWebhookUrl(raw: string, opts: { allowInsecure: boolean }): URL {
  if (raw.length > MAX_WEBHOOK_URL_CHARS) throw refuse('too_long');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('invalid_url');
  }
  if (url.href.length > MAX_WEBHOOK_URL_CHARS) throw refuse('too_long');
  if (url.protocol !== 'https:' && !(opts.allowInsecure && url.protocol === 'http:')) throw refuse('not_https');
  if (url.username !== '' || url.password !== '') throw refuse('credentials_in_url');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw refuse('invalid_url');
  if (opts.allowInsecure) return url;
  const problem = isIP(host) ? addressProblem(host) : isLocalhostName(host) ? 'loopback' : undefined;
  if (problem) throw refuse(problem);
  return url;
}

/** Answers `[]`-free address lists or throws; what the guard needs of a resolver. */
export type ResolveAddresses = (host: string) => Promise<string[]>;

/**
 * The server's configured resolver (`--dns-servers`, domains' createDnsResolver)
 * as a ResolveAddresses: A and AAAA answers, a failure thrown with its reason.
 */
export function resolverFromDns(dns: Pick<DnsLookups, 'addresses'>): ResolveAddresses {
  return async (host) => {
    const r = await dns.addresses(host);
    if (r.ok) return r.values;
    throw Object.assign(new Error(r.reason), { code: r.temporary ? 'EAI_AGAIN' : 'ENOTFOUND', hostname: host });
  };
}

/** Resolves once and returns every answer, or throws if any one of them is refused. */
async function checkedAddresses(
  host: string,
  resolve: ResolveAddresses,
  allowInsecure: boolean,
): Promise<LookupAddress[]> {
  const answers = isIP(host) ? [host] : await resolve(host);
  if (answers.length === 0) throw Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' });
  return answers.map((address) => {
    const problem = isIP(address) === 0 ? 'not_an_ip' : allowInsecure ? undefined : addressProblem(address);
    if (problem) throw new UnsafeAddressError(host, address, problem);
    return { address, family: isIPv4(address) ? 4 : 6 };
  });
}

/**
 * A `lookup` for net/tls `connect` (node's dns.lookup callback shape): it resolves
 * the host ONCE per connection, refuses the host if ANY answer is refused, and
 * hands the checked addresses to the socket, which connects to one of them
 * without looking the name up again. With `all` (set by net when autoSelectFamily
 * is on, node's default) it answers the list, otherwise the first address.
 * Refusing the whole host rather than keeping its public answers: a name that
 * answers a private address is hostile or misconfigured, and the outcome must not
 * depend on which answer the connection happens to try first.
 * With allowInsecure it still resolves once but allows every address.
 */
export function createGuardedLookup(resolve: ResolveAddresses, opts: { allowInsecure: boolean }): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const f = options.family;
    const wanted = f === 4 || f === 'IPv4' ? 4 : f === 6 || f === 'IPv6' ? 6 : 0;
    void checkedAddresses(hostname, resolve, opts.allowInsecure).then(
      (all) => {
        const addresses = wanted === 0 ? all : all.filter((a) => a.family === wanted);
        const first = addresses[0];
        const none = Object.assign(new Error(`no IPv${wanted} address for ${hostname}`), { code: 'ENOTFOUND' });
        if (!first) callback(none, options.all ? [] : '');
        else if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (e: NodeJS.ErrnoException) => callback(e, options.all ? [] : ''),
    );
  };
}
