/**
 * What to publish when a record svc needs is already there in another form
 * (issue 28 item 2): one SPF record holding both, never a second one.
 */

const ALL = /^[+?~-]?all$/i;

/**
 * The one SPF record to publish in place of `existing` (one or more v=spf1 records at a
 * name) so that it also authorises `hostname`: their terms, each once, `a:<hostname>`
 * added, and the first record's `all` (or `~all`) last.
 */
export function mergedSpf(existing: string[], hostname: string): string {
  const terms: string[] = [];
  let all: string | undefined;
  for (const record of existing) {
    for (const term of record.trim().split(/\s+/).slice(1)) {
      if (ALL.test(term)) all ??= term;
      else if (!terms.some((t) => t.toLowerCase() === term.toLowerCase())) terms.push(term);
    }
  }
  const ours = `a:${hostname}`;
  if (!terms.some((t) => t.toLowerCase() === ours.toLowerCase())) terms.push(ours);
  return ['v=spf1', ...terms, all ?? '~all'].join(' ');
}

/** The p= policy of a DMARC record ("none" when absent, as RFC 7489 reads a missing p=). */
export function dmarcPolicy(record: string): string {
  const tag = record.split(';').find((t) => /^\s*p\s*=/i.test(t));
  return tag
    ? tag
        .slice(tag.indexOf('=') + 1)
        .trim()
        .toLowerCase()
    : 'none';
}

/**
 * The one DMARC record to publish in place of `existing` so that aggregate reports also
 * reach svc: its tags as they are, `mailto:<address>` added to rua= (or a rua= tag added).
 * Undefined when the record already sends them there.
 */
export function mergedDmarc(existing: string, address: string): string | undefined {
  const tags = existing
    .split(';')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const uri = `mailto:${address}`;
  const rua = tags.findIndex((t) => /^rua\s*=/i.test(t));
  if (rua < 0) return [...tags, `rua=${uri}`].join('; ');
  const uris = tags[rua]!.slice(tags[rua]!.indexOf('=') + 1)
    .split(',')
    .map((u) => u.trim());
  // A URI may carry a size limit (mailto:a@b!10m, RFC 7489 §6.2).
  if (uris.some((u) => u.replace(/!.*$/, '').toLowerCase() === uri.toLowerCase())) return undefined;
  tags[rua] = `rua=${[...uris, uri].join(',')}`;
  return tags.join('; ');
}
