// The `_smtp._tls` TXT record of a policy domain (RFC 8460 section 3): where its reports go.

/** A report destination: by mail (the address) or by HTTPS POST (the URL). */
export type Rua = { kind: 'mailto'; uri: string; address: string } | { kind: 'https'; uri: string; url: string };

export type RecordAnswer = { rua: Rua[]; ignored: string[] } | { problem: string };

const VERSION = /^v\s*=\s*TLSRPTv1\s*(;|$)/;

/**
 * Reads a domain's TXT strings (each record's chunks already joined): exactly one must start
 * with `v=TLSRPTv1` (section 3: more than one means none); its `rua` is a comma-separated list
 * of URIs, of which mailto: and https: are used and any other scheme is ignored (`ignored`).
 */
export function parseTlsRptRecords(txt: string[]): RecordAnswer {
  const records = txt.filter((t) => VERSION.test(t));
  if (records.length === 0) return { problem: 'no v=TLSRPTv1 record' };
  if (records.length > 1) return { problem: `${records.length} v=TLSRPTv1 records: the RFC says to use none` };
  const fields = records[0]!.split(';').map((f) => f.trim());
  const rua = fields.find((f) => /^rua\s*=/i.test(f));
  if (!rua) return { problem: 'the record has no rua' };
  const uris = rua
    .replace(/^rua\s*=\s*/i, '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  const out: Rua[] = [];
  const ignored: string[] = [];
  for (const uri of uris) {
    const parsed = ruaOf(uri);
    if (parsed) out.push(parsed);
    else ignored.push(uri);
  }
  if (out.length === 0) return { problem: `no usable rua (mailto: or https:) in ${JSON.stringify(uris)}` };
  return { rua: out, ignored };
}

function ruaOf(uri: string): Rua | undefined {
  if (/^mailto:/i.test(uri)) {
    // mailto:reports@example.com?subject=… : the address only (RFC 6068), percent-decoded.
    let address: string;
    try {
      address = decodeURIComponent(uri.slice('mailto:'.length).split('?')[0]!);
    } catch {
      return undefined;
    }
    return /^[^\s@,]+@[^\s@,]+$/.test(address) ? { kind: 'mailto', uri, address } : undefined;
  }
  if (/^https:/i.test(uri) && URL.canParse(uri)) return { kind: 'https', uri, url: new URL(uri).href };
  return undefined;
}

/** Answers that mean "no record", not a failure to ask: the name or its TXT records do not exist. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);

/** The TXT strings of a name through `resolver` (each record's chunks joined); [] when it has none. */
export function createTxtLookup(resolver: { resolveTxt(name: string): Promise<string[][]> }) {
  return async (name: string): Promise<string[]> => {
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (err) {
      if (NO_RECORD.has((err as { code?: string }).code ?? '')) return [];
      throw err;
    }
  };
}
