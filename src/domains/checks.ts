import { lookupExplained } from './aliases.ts';
import type { DnsLookups, Lookup } from '../lib/dns.ts';
import { apexOfReturnPath, dmarcReportAddress, REQUIRED, type DnsRecord, type RecordCheck } from './records.ts';
import { dmarcPolicy, mergedDmarc, mergedSpf } from './merge.ts';
import { spfAuthorises } from './spf.ts';
import { SPF_LOOKUP_LIMIT, spfLookups, spfSyntaxError } from './spf-limits.ts';

/** pass: DKIM and SPF match; fail: one is missing or wrong; inconclusive: a lookup failed for now. */
export type Outcome = 'pass' | 'fail' | 'inconclusive';

export interface CheckRun {
  checks: RecordCheck[];
  outcome: Outcome;
  /** The failing required checks' reasons, for the warning. */
  summary: string;
}

interface Checked {
  check: RecordCheck;
  /** The failure came from a lookup that failed for now, not from the records. */
  temporary: boolean;
}

const ok = (r: DnsRecord, found: string[]): Checked => ({
  check: { ...base(r), ok: true, reason: null, found },
  temporary: false,
});
const bad = (r: DnsRecord, reason: string, found: string[], temporary = false): Checked => ({
  check: { ...base(r), ok: false, reason, found },
  temporary,
});
const base = (r: DnsRecord) => ({ type: r.type, name: r.name, purpose: r.purpose });
const failed = (r: DnsRecord, l: Extract<Lookup, { ok: false }>) => bad(r, l.reason, [], l.temporary);

/** Looks every record up through `dns` and decides whether the domain's records match. */
export async function runChecks(dns: DnsLookups, records: DnsRecord[], hostname: string): Promise<CheckRun> {
  const results = (await Promise.all(records.map((r) => checkRecord(dns, r, hostname)))).map(noteOptional);
  const required = results.filter((r) => REQUIRED.includes(r.check.purpose));
  const failing = required.filter((r) => !r.check.ok);
  const outcome: Outcome = failing.length === 0 ? 'pass' : failing.some((r) => !r.temporary) ? 'fail' : 'inconclusive';
  const summary = failing.map((r) => `${r.check.purpose.toUpperCase()}: ${r.check.reason}`).join('; ');
  return { checks: results.map((r) => r.check), outcome, summary };
}

/** What a failing record that is not required adds to its reason. */
const OPTIONAL_NOTE: Partial<Record<DnsRecord['purpose'], string>> = {
  'dkim-next': 'publish it: svc signs with the current key until it sees this one, then switches',
  'dkim-retiring': 'the replaced key: mail it signed may still be checked against it until its grace period ends',
  inbound: 'needed to receive mail, not to send it',
};

/** A failing return-path, DMARC or rotation key check says that it does not stop verification. */
function noteOptional(r: Checked): Checked {
  if (r.check.ok || REQUIRED.includes(r.check.purpose)) return r;
  const note = OPTIONAL_NOTE[r.check.purpose] ?? 'recommended, not required';
  return { ...r, check: { ...r.check, reason: `${r.check.reason} (${note})` } };
}

function checkRecord(dns: DnsLookups, record: DnsRecord, hostname: string): Promise<Checked> {
  switch (record.purpose) {
    case 'dkim':
    case 'dkim-next':
    case 'dkim-retiring':
      return checkDkim(dns, record);
    case 'dkim-retired':
      return checkRetired(dns, record);
    case 'spf':
      return checkSpf(dns, record, hostname);
    case 'return-path':
      return checkReturnPath(dns, record, hostname);
    case 'inbound':
      return checkInbound(dns, record, hostname);
    case 'dmarc':
      return checkDmarc(dns, record);
  }
}

/** The p= tag of a DKIM key record, whitespace removed; undefined when absent. */
export function dkimKeyOf(txt: string): string | undefined {
  const tag = txt.split(';').find((t) => /^\s*p\s*=/i.test(t));
  return tag?.slice(tag.indexOf('=') + 1).replace(/\s+/g, '');
}

async function checkDkim(dns: DnsLookups, record: DnsRecord): Promise<Checked> {
  const l = await lookupExplained(dns, 'TXT', record.name);
  if (!l.ok) return failed(record, l);
  const keys = l.values.map(dkimKeyOf).filter((k) => k !== undefined);
  if (keys.length === 0) return bad(record, `no DKIM key record (v=DKIM1; p=...) at ${record.name}`, l.values);
  if (keys.includes(dkimKeyOf(record.value)!)) return ok(record, l.values);
  if (keys.every((k) => k === '')) return bad(record, `the DKIM key at ${record.name} is empty (revoked)`, l.values);
  return bad(record, `the DKIM key at ${record.name} differs from this domain's key`, l.values);
}

/** A retired key's record is no longer needed: the check says whether it is still there to remove. */
async function checkRetired(dns: DnsLookups, record: DnsRecord): Promise<Checked> {
  const l = await dns.txt(record.name);
  const there = l.ok && l.values.some((v) => dkimKeyOf(v) === dkimKeyOf(record.value));
  const reason = there
    ? `the key at ${record.name} is retired and no longer signs: this record can be removed`
    : !l.ok && l.temporary
      ? `the key at ${record.name} is retired; its record could not be looked up (${l.reason})`
      : `the key at ${record.name} is retired; its record is gone`;
  return { check: { ...base(record), ok: true, reason, found: l.ok ? l.values : [] }, temporary: false };
}

const isSpf = (v: string) => /^v=spf1(\s|$)/i.test(v.trim());

async function checkSpf(dns: DnsLookups, record: DnsRecord, hostname: string): Promise<Checked> {
  const l = await lookupExplained(dns, 'TXT', record.name);
  // The return path not existing at all (NXDOMAIN) is how a domain set up before the move reads.
  if (!l.ok && l.code === 'ENOTFOUND') return bad(record, (await atApexOnly(dns, record, hostname)) ?? l.reason, []);
  if (!l.ok) return failed(record, l);
  const spf = l.values.filter(isSpf);
  if (spf.length === 0) {
    const missing = `no SPF record (v=spf1) at ${record.name}`;
    return bad(record, (await atApexOnly(dns, record, hostname)) ?? missing, l.values);
  }
  const merge = `publish this one record in their place: ${mergedSpf(spf, hostname)}`;
  // RFC 7208 §4.5: more than one SPF record is a permanent error for receivers.
  if (spf.length > 1)
    return bad(record, `${spf.length} SPF records at ${record.name}; there must be one, so ${merge}`, spf);
  const broken = spfSyntaxError(spf[0]!);
  if (broken !== undefined) {
    const why = `the SPF record at ${record.name} has a syntax error at "${broken}": receivers fail SPF (permerror) for all its mail`;
    return bad(record, why, spf);
  }
  const lookups = await spfLookups(spf[0]!, dns);
  if (lookups > SPF_LOOKUP_LIMIT) {
    const why = `the SPF record at ${record.name} needs more than ${SPF_LOOKUP_LIMIT} DNS lookups (include:, a, mx, ptr, exists:, redirect=, counted through its includes): receivers fail SPF (permerror); replace includes with ip4:/ip6: ranges`;
    return bad(record, why, spf);
  }
  const verdict = await spfAuthorises(spf[0]!, record.name, hostname, dns);
  if (verdict.ok) return ok(record, spf);
  if (verdict.temporary) return bad(record, verdict.reason, spf, true);
  return bad(record, `${verdict.reason}; ${merge.replace('their', 'its')}`, spf);
}

/**
 * The reason when the domain's SPF at its apex authorises this server but the return path has
 * none: how a domain set up before SPF moved to the return path (issue 28) reads. Receivers
 * evaluate SPF for the envelope sender's domain, bounces.<domain>, so the apex record never
 * passed svc's mail. Undefined when the apex says nothing of this server.
 */
async function atApexOnly(dns: DnsLookups, record: DnsRecord, hostname: string): Promise<string | undefined> {
  const apex = apexOfReturnPath(record.name);
  const l = await dns.txt(apex);
  const spf = l.ok ? l.values.filter(isSpf) : [];
  if (spf.length !== 1 || !(await spfAuthorises(spf[0]!, apex, hostname, dns)).ok) return undefined;
  return (
    `no SPF record (v=spf1) at ${record.name}. The SPF record at ${apex} authorises ${hostname}, but receivers ` +
    `evaluate SPF for svc's envelope sender (bounces+…@${record.name}) at ${record.name}, so it never passes svc's ` +
    `mail: publish ${record.value} at ${record.name}; the record at ${apex} stays as it is`
  );
}

async function checkReturnPath(dns: DnsLookups, record: DnsRecord, hostname: string): Promise<Checked> {
  const l = await lookupExplained(dns, 'MX', record.name);
  if (!l.ok) return failed(record, l);
  if (l.values.includes(hostname)) return ok(record, l.values);
  if (l.values.length === 0) return bad(record, `no MX record at ${record.name}`, []);
  const elsewhere = `the MX of ${record.name} points to ${l.values.join(', ')}, not ${hostname}`;
  return bad(
    record,
    `${elsewhere}: bounces to svc's return path go there; replace it with MX ${record.value}`,
    l.values,
  );
}

/** A receiving domain's MX (issue 34): its mail must come to this server for the routes to get it. */
async function checkInbound(dns: DnsLookups, record: DnsRecord, hostname: string): Promise<Checked> {
  const l = await lookupExplained(dns, 'MX', record.name);
  if (!l.ok) return failed(record, l);
  if (l.values.includes(hostname)) return ok(record, l.values);
  if (l.values.length === 0)
    return bad(record, `no MX record at ${record.name}: mail for its routes cannot arrive`, []);
  return bad(
    record,
    `the MX of ${record.name} points to ${l.values.join(', ')}, not ${hostname}: mail for its routes goes there; ` +
      `publish MX ${record.value}`,
    l.values,
  );
}

async function checkDmarc(dns: DnsLookups, record: DnsRecord): Promise<Checked> {
  const l = await lookupExplained(dns, 'TXT', record.name);
  if (!l.ok) return failed(record, l);
  const dmarc = l.values.filter((v) => /^v=DMARC1(\s*;|\s*$)/i.test(v.trim()));
  if (dmarc.length === 1 && dmarc[0] === record.value) return ok(record, dmarc);
  // An existing policy is the owner's: report it, and never propose a second record beside it.
  if (dmarc.length === 1) {
    const domain = record.name.replace(/^_dmarc\./, '');
    const merged = mergedDmarc(dmarc[0]!, dmarcReportAddress(domain));
    // Its reports come home only with svc's address in rua= (svc domains report).
    const rua = merged ? `; to send its aggregate reports to svc too, publish in its place: ${merged}` : '';
    const note = `a DMARC record is already published (policy p=${dmarcPolicy(dmarc[0]!)}): keep it, publish no second one${rua}`;
    return { check: { ...base(record), ok: true, reason: note, found: dmarc }, temporary: false };
  }
  if (dmarc.length > 1)
    return bad(record, `${dmarc.length} DMARC records at ${record.name}; receivers ignore them all: keep one`, dmarc);
  return bad(record, `no DMARC record (v=DMARC1) at ${record.name}`, l.values);
}
