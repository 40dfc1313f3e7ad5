import { isIPv4, isIPv6 } from 'node:net';

/** An address in one spelling (IPv6 compressed, lowercase), so two spellings of one address compare equal. */
export function canonicalAddress(address: string): string {
  if (!isIPv6(address)) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/**
 * Whether an address is one the Internet never sees as a sender: private (RFC 1918, RFC 4193),
 * loopback, link-local or CGNAT. Mail from it leaves through NAT under another address.
 */
export function isPrivateAddress(address: string): boolean {
  if (isIPv4(address)) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return (
      a === 10 ||
      a === 127 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  const c = canonicalAddress(address);
  return c === '::1' || /^f[cd]/.test(c) || /^fe[89ab]/.test(c);
}

/**
 * An address's name under `zone`: IPv4's octets reversed, IPv6's 32 nibbles reversed, as
 * reverse DNS (in-addr.arpa, ip6.arpa) and DNS blocklists (RFC 5782) ask. Undefined for no address.
 */
export function reversedName(address: string, zone: string): string | undefined {
  if (isIPv4(address)) return `${address.split('.').reverse().join('.')}.${zone}`;
  if (!isIPv6(address)) return undefined;
  const [head = '', tail] = canonicalAddress(address).split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const nibbles = groups.map((g) => g.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.${zone}`;
}
