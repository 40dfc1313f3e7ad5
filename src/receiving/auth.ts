// The authentication results of a received message (issue 34, item 3): SPF of the envelope
// sender and the client, each DKIM signature, DMARC of the From domain and the ARC chain,
// computed by mailauth (an independent, maintained implementation) with the server's resolver.
import { authenticate, type AuthenticateResult, type AuthStatus, type DNSResolver } from 'mailauth';
import { openResolver, type DnsOptions } from '../lib/dns.ts';

export interface AuthResults {
  /** pass, fail, softfail, neutral, none, temperror or permerror. */
  spf: { result: string; domain: string | null };
  /** One per DKIM-Signature field; [] when the message is unsigned. */
  dkim: { result: string; domain: string | null; selector: string | null; aligned: boolean }[];
  dmarc: { result: string; policy: string | null; domain: string | null };
  arc: { result: string };
  /** The Authentication-Results value mailauth writes (RFC 8601), unfolded, without the field name. */
  header: string;
}

/** mailauth's resolver: node:dns's resolve(name, rrtype), answers shaped as node:dns gives them. */
export type Resolver = (name: string, rrtype: string) => Promise<unknown>;

/**
 * The resolver mailauth asks, on `servers` ("host:port", as --dns-servers gives them; the system's
 * when absent), with the short timeout and few tries of every lookup of svc (lib/dns.ts): a
 * sender's dead DNS makes a temperror, not a stalled DATA.
 */
export function resolverFor(servers: string[] | undefined, opts: DnsOptions = {}): Resolver {
  const resolver = openResolver(servers, opts);
  return (name, rrtype) => resolver.resolve(name, rrtype);
}

/** mailauth writes "temperr" in a few places for RFC 8601's temperror. */
const resultOf = (status: AuthStatus | undefined): string =>
  status?.result === 'temperr' ? 'temperror' : (status?.result ?? 'none');

/** The Authentication-Results field among those mailauth would prepend, unfolded, without its name. */
function headerOf(headers: string): string {
  const field = headers.split(/\r?\n(?=\S)/).find((f) => /^Authentication-Results:/i.test(f)) ?? '';
  return field
    .replace(/^Authentication-Results:\s*/i, '')
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

function resultsOf(r: AuthenticateResult): AuthResults {
  return {
    spf: { result: r.spf ? resultOf(r.spf.status) : 'none', domain: (r.spf && r.spf.domain) || null },
    // An unsigned message gives one result, none without a domain: no signature, no row.
    dkim: r.dkim.results
      .filter((d) => d.signingDomain !== undefined || d.status.result !== 'none')
      .map((d) => ({
        result: resultOf(d.status),
        domain: d.signingDomain ?? null,
        selector: d.selector ?? null,
        // mailauth guesses alignment for a failing signature too; only a passing one counts (DMARC).
        aligned: d.status.result === 'pass' && Boolean(d.status.aligned),
      })),
    dmarc: r.dmarc
      ? { result: resultOf(r.dmarc.status), policy: r.dmarc.policy || null, domain: r.dmarc.domain || null }
      : { result: 'none', policy: null, domain: null },
    arc: { result: r.arc ? resultOf(r.arc.status) : 'none' },
    header: headerOf(r.headers),
  };
}

/**
 * Authenticates a received message as the receiving server `hostname` saw it from `envelope`.
 * Never throws for what a message holds: mailauth turns a DNS failure into temperror, and a
 * message it cannot read at all gives temperror results rather than an exception.
 */
export async function authenticateMessage(
  raw: Buffer,
  envelope: { ip: string; helo: string; mailFrom: string | null },
  opts: { hostname: string; resolver: Resolver },
): Promise<AuthResults> {
  try {
    const r = await authenticate(raw, {
      ip: envelope.ip,
      helo: envelope.helo,
      // The null reverse-path (a bounce): SPF checks the HELO name then (RFC 7208 2.4).
      sender: envelope.mailFrom ?? '',
      mta: opts.hostname,
      // node:dns answers in the shapes mailauth reads (string[][] for TXT, string[] for A).
      resolver: opts.resolver as DNSResolver,
      disableBimi: true,
    });
    return resultsOf(r);
  } catch {
    return {
      spf: { result: 'temperror', domain: null },
      dkim: [],
      dmarc: { result: 'temperror', policy: null, domain: null },
      arc: { result: 'none' },
      header: `${opts.hostname}; spf=temperror; dmarc=temperror`,
    };
  }
}
