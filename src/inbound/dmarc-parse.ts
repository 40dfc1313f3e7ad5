import { isIP } from 'node:net';
import { TextDecoder } from 'node:util';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** pass or fail: DMARC's own evaluation of one identifier (policy_evaluated, RFC 7489 appendix C). */
export type Aligned = 'pass' | 'fail';

/** One <record> of an aggregate report: messages from one source IP with one set of results. */
export interface ReportRow {
  source_ip: string;
  count: number;
  /** none, quarantine or reject: what the receiver did. */
  disposition: string;
  /** The DKIM result for the report's domain (else the first signature's), as auth_results says. */
  dkim_result: string | null;
  dkim_domain: string | null;
  spf_result: string | null;
  spf_domain: string | null;
  /** DMARC's verdict on DKIM and SPF: passed and aligned with the From domain, or not. */
  dkim_aligned: Aligned;
  spf_aligned: Aligned;
}

/** An aggregate report (RFC 7489 §7.2 and appendix C), as svc keeps it. */
export interface AggregateReport {
  org_name: string;
  report_id: string;
  /** The period covered, epoch seconds (date_range begin and end). */
  begin: number;
  end: number;
  /** policy_published: the domain the report is about, and its p=. */
  domain: string;
  policy: string;
  rows: ReportRow[];
}

/** More rows than this is not one domain's daily report from one receiver. */
export const REPORT_MAX_ROWS = 20_000;

export type Parsed = { ok: true; report: AggregateReport } | { ok: false; reason: string };

type Node = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  // DTDs are refused before parsing (no entity expansion); the five predefined entities only.
  processEntities: true,
  htmlEntities: false,
  // Records, and the results of auth_results (policy_evaluated's dkim and spf are single values).
  isArray: (name, path) => name === 'record' || /\.auth_results\.(?:dkim|spf)$/.test(String(path)),
});

/** No tag of a report comes near this length: a longer one is an attribute flood, refused before parsing. */
export const REPORT_MAX_TAG_CHARS = 4096;
const LONG_TAG = new RegExp(`<[^<>]{${REPORT_MAX_TAG_CHARS}}`);

/** The encoding the XML declaration names (`<?xml … encoding="…"?>`), else UTF-8 (XML 1.0 §4.3.3). */
function declaredEncoding(bytes: Uint8Array): string {
  // A UTF-16 byte order mark says it before any declaration can be read (XML 1.0 appendix F).
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  const head = Buffer.from(bytes.subarray(0, 256)).toString('latin1');
  return /^(?:\xEF\xBB\xBF)?\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([^"']{1,40})["']/.exec(head)?.[1] ?? 'utf-8';
}

/** Decodes the bytes of a report by the encoding it declares, then reads it; bytes not in that encoding are refused. */
export function parseReportBytes(bytes: Uint8Array): Parsed {
  const label = declaredEncoding(bytes);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    return { ok: false, reason: `the report declares an encoding this server cannot read: ${label}` };
  }
  let xml: string;
  try {
    xml = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: `the report is not valid ${decoder.encoding} (the encoding it declares, else UTF-8)` };
  }
  return parseAggregateReport(xml);
}

/** Reads the XML of an aggregate report; a malformed, truncated or incomplete report is refused with the reason. */
export function parseAggregateReport(xml: string): Parsed {
  // A DOCTYPE can declare entities that expand without bound (billion laughs): reports have none.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) return { ok: false, reason: 'the report declares a DOCTYPE: refused' };
  // Checked before the validator, which holds every attribute of a tag in memory at once.
  if (LONG_TAG.test(xml)) {
    return { ok: false, reason: `the report has a tag over ${REPORT_MAX_TAG_CHARS} characters long: refused` };
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    const { msg, line } = valid.err;
    return { ok: false, reason: `the report is not well-formed XML (line ${line}: ${msg})` };
  }
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch (e) {
    // The parser's own limits, such as maxNestedTags (100): an answer, not a crash.
    return { ok: false, reason: `the report could not be read as XML (${(e as Error).message})` };
  }
  try {
    return { ok: true, report: reportOf(doc) };
  } catch (e) {
    if (e instanceof ReportError) return { ok: false, reason: e.message };
    throw e;
  }
}

class ReportError extends Error {}

const node = (v: unknown): Node | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined;

/** No value svc keeps from a report (a name, an ID, a result) is longer: a longer one would only fill the disk. */
export const REPORT_MAX_VALUE_CHARS = 255;

function bounded(v: string, name: string): string {
  if (v.length > REPORT_MAX_VALUE_CHARS) {
    throw new ReportError(`<${name}> is ${v.length} characters long, over ${REPORT_MAX_VALUE_CHARS}`);
  }
  return v;
}

function text(parent: Node | undefined, name: string, where: string): string {
  const v = parent?.[name];
  if (typeof v !== 'string' || v === '')
    throw new ReportError(`not a DMARC aggregate report: no <${name}> in <${where}>`);
  return bounded(v, name);
}

const optional = (parent: Node | undefined, name: string) => {
  const v = parent?.[name];
  return typeof v === 'string' && v !== '' ? bounded(v, name) : null;
};

function integer(parent: Node | undefined, name: string, where: string): number {
  const v = text(parent, name, where);
  if (!/^\d{1,15}$/.test(v)) throw new ReportError(`<${where}><${name}> is not a whole number: ${v.slice(0, 40)}`);
  return Number(v);
}

/** More messages than this from one address in one report is not a count. */
export const REPORT_MAX_COUNT = 1_000_000_000;

function messageCount(row: Node | undefined): number {
  const n = integer(row, 'count', 'row');
  if (n > REPORT_MAX_COUNT) throw new ReportError(`<row><count> is ${n}, over ${REPORT_MAX_COUNT}`);
  return n;
}

function reportOf(doc: Node): AggregateReport {
  const feedback = node(doc.feedback);
  if (!feedback) throw new ReportError('not a DMARC aggregate report: the root element is not <feedback>');
  const meta = node(feedback.report_metadata);
  const range = node(meta?.date_range);
  const published = node(feedback.policy_published);
  const records = (feedback.record ?? []) as unknown[];
  if (records.length > REPORT_MAX_ROWS) {
    throw new ReportError(`the report has ${records.length} records, over ${REPORT_MAX_ROWS}`);
  }
  // A domain name may come fully qualified, with its root dot (Example.COM.).
  const domain = text(published, 'domain', 'policy_published').toLowerCase().replace(/\.$/, '');
  return {
    org_name: text(meta, 'org_name', 'report_metadata'),
    report_id: text(meta, 'report_id', 'report_metadata'),
    begin: integer(range, 'begin', 'date_range'),
    end: integer(range, 'end', 'date_range'),
    domain,
    policy: optional(published, 'p')?.toLowerCase() ?? 'none',
    rows: records.map((r) => rowOf(node(r), domain)),
  };
}

const aligned = (v: string | null): Aligned => (v?.toLowerCase() === 'pass' ? 'pass' : 'fail');

function rowOf(record: Node | undefined, domain: string): ReportRow {
  const row = node(record?.row);
  const evaluated = node(row?.policy_evaluated);
  const auth = node(record?.auth_results);
  const sourceIp = text(row, 'source_ip', 'row');
  if (!isIP(sourceIp)) throw new ReportError(`<row><source_ip> is not an IP address: ${sourceIp.slice(0, 60)}`);
  const dkims = ((auth?.dkim ?? []) as unknown[]).map(node);
  const dkim = dkims.find((d) => optional(d, 'domain')?.toLowerCase() === domain) ?? dkims[0];
  const spf = ((auth?.spf ?? []) as unknown[]).map(node)[0];
  return {
    source_ip: sourceIp,
    count: messageCount(row),
    disposition: text(evaluated, 'disposition', 'policy_evaluated').toLowerCase(),
    dkim_result: optional(dkim, 'result')?.toLowerCase() ?? null,
    dkim_domain: optional(dkim, 'domain')?.toLowerCase() ?? null,
    spf_result: optional(spf, 'result')?.toLowerCase() ?? null,
    spf_domain: optional(spf, 'domain')?.toLowerCase() ?? null,
    dkim_aligned: aligned(optional(evaluated, 'dkim')),
    spf_aligned: aligned(optional(evaluated, 'spf')),
  };
}
