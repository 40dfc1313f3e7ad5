import type { DnsLookups, Lookup } from '../lib/dns.ts';

/** CNAME hops followed before a chain counts as broken (resolvers give up after a handful). */
export const MAX_ALIASES = 8;

type Failure = Extract<Lookup, { ok: false }>;

/**
 * Why a name answered nothing of `type` when it is an alias (issue 28, "a CNAME loop": a
 * clear, specific answer). A record svc wants may be delegated by CNAME (a DKIM key kept at
 * another provider is); only when that answer was empty or failed are the aliases followed,
 * one CNAME question each, to say which link is wrong. Undefined when the name is no alias
 * (or the aliases cannot be read), so the lookup's own answer stands.
 */
export async function aliasProblem(
  dns: Pick<DnsLookups, 'cname'>,
  name: string,
  type: string,
): Promise<Failure | undefined> {
  const chain = [name.toLowerCase()];
  for (;;) {
    const l = await dns.cname(chain.at(-1)!);
    const next = l.ok ? l.values[0] : undefined;
    if (next === undefined) break;
    if (chain.includes(next)) {
      const loop = [...chain, next].join(' → ');
      return definite(
        `a CNAME loop: ${loop}; receivers can read no record at ${name}: remove or correct one of these CNAMEs`,
      );
    }
    chain.push(next);
    if (chain.length > MAX_ALIASES + 1) {
      return definite(`${name} is an alias (CNAME) of a chain over ${MAX_ALIASES} long: receivers give up on it`);
    }
  }
  if (chain.length === 1) return undefined;
  const end = chain.at(-1)!;
  const via = chain.length > 2 ? ` (through ${chain.slice(1, -1).join(' → ')})` : '';
  return definite(
    `${name} is an alias (CNAME) of ${end}${via}, which has no ${type} record; a name with a CNAME holds no ` +
      `other record: publish the record at ${end}, or replace the CNAME at ${name} with it`,
  );
}

const definite = (reason: string): Failure => ({ ok: false, temporary: false, reason });

/** The answers an alias can explain; a timeout, a refusal or a cancelled lookup says nothing of the records. */
const EXPLAINED = new Set(['ENOTFOUND', 'ESERVFAIL']);

/**
 * A lookup of `type` at `name`, with its aliases explained when it found nothing: NODATA,
 * NXDOMAIN (a CNAME to a name that does not exist) or SERVFAIL (how resolvers answer a CNAME
 * loop). Nothing else is followed: another query would only wait again, or outlive a
 * shutdown that cancelled the lookup.
 */
export async function lookupExplained(dns: DnsLookups, type: 'TXT' | 'MX', name: string): Promise<Lookup> {
  const l = await (type === 'TXT' ? dns.txt(name) : dns.mx(name));
  const empty = l.ok ? l.values.length === 0 : EXPLAINED.has(l.code ?? '');
  if (!empty) return l;
  return (await aliasProblem(dns, name, type)) ?? l;
}
