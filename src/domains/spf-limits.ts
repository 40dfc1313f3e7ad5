import type { DnsLookups } from '../lib/dns.ts';

/** RFC 7208 §4.6.4: an SPF evaluation may cause at most 10 DNS-querying terms. */
export const SPF_LOOKUP_LIMIT = 10;

const MECHANISM =
  /^[+?~-]?(?:all|include:\S+|exists:\S+|ptr(?::\S+)?|(?:a|mx)(?::[^/\s]+)?(?:\/\d{1,2})?(?:\/\/\d{1,3})?|ip4:\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?|ip6:[0-9a-f:.]+(?:\/\d{1,3})?)$/i;
const MODIFIER = /^[a-z][a-z0-9_.-]*=\S*$/i;
/** Terms that make a DNS query, and those whose target's own record is evaluated too. */
const QUERYING = /^[+?~-]?(?:include:|exists:|ptr\b|a\b|mx\b|redirect=)/i;
const FOLLOWED = /^(?:[+?~-]?include:|redirect=)(\S+)$/i;

/** The first term of an SPF record that is neither a mechanism nor a modifier, if any. */
export function spfSyntaxError(record: string): string | undefined {
  return record
    .trim()
    .split(/\s+/)
    .slice(1)
    .find((t) => !MECHANISM.test(t) && !MODIFIER.test(t));
}

/**
 * The DNS-querying terms evaluating `record` takes, counted through the records its
 * include: and redirect= name (once each), stopping once past the limit. A target that
 * cannot be looked up counts its one query and is not followed.
 */
export async function spfLookups(record: string, dns: DnsLookups, seen = new Set<string>()): Promise<number> {
  let count = 0;
  for (const term of record.trim().split(/\s+/).slice(1)) {
    if (!QUERYING.test(term)) continue;
    count++;
    const target = FOLLOWED.exec(term)?.[1]?.toLowerCase();
    if (!target || seen.has(target) || count > SPF_LOOKUP_LIMIT) continue;
    seen.add(target);
    const l = await dns.txt(target);
    const spf = l.ok ? l.values.find((v) => /^v=spf1(\s|$)/i.test(v.trim())) : undefined;
    if (spf) count += await spfLookups(spf, dns, seen);
    if (count > SPF_LOOKUP_LIMIT) break;
  }
  return count;
}
