import { dmarcReportAddress } from '../domains/index.ts';
import type { AggregateReport, ReportRow } from './dmarc-parse.ts';
import { reporterDayStart, type ReportingParty } from './dmarc-limits.ts';

/**
 * The decisions about DMARC aggregate reports (issue 28 item 7), pure, so that both stores
 * execute the same plan: which rows are svc's, which are flagged, and what a report says
 * of the DKIM signing of the emails it covers.
 */

/** The sending domain whose report address `address` is (dmarc@bounces.<domain>), or undefined. */
export function domainOfReportAddress(address: string): string | undefined {
  const a = address.toLowerCase();
  // The domain is what follows the return-path label; records.ts alone says what the address is.
  const domain = a.slice(a.indexOf('.', a.indexOf('@')) + 1);
  return a.includes('@') && domain && dmarcReportAddress(domain) === a ? domain : undefined;
}

/** A report row as stored: its source is one of svc's addresses, or it is flagged. */
export interface StoredRow extends ReportRow {
  own_source: boolean;
  /** Not from svc and failing DMARC: someone spoofs the domain, or another sender was forgotten. */
  flagged: boolean;
}

export type SigningStatus = 'confirmed' | 'failed';

/** What recording one report writes, in one transaction. */
export interface ReportPlan {
  report: {
    id: string;
    domain_id: string;
    org_name: string;
    report_id: string;
    begin_at: string;
    end_at: string;
    policy: string;
    received_at: string;
    /** The connecting IP of the SMTP session that brought it; null for `svc inbound process`. */
    sender_ip: string | null;
    row_count: number;
  };
  /** Whose daily limit the report counts against (dmarc-limits.ts), and since when the day counts. */
  reporter: ReportingParty & { since: string };
  rows: StoredRow[];
  /** Emails still `expected`, signed d=`domain` and sent in [from, to], move to `status`. */
  signing: { status: SigningStatus; domain: string; from: string; to: string } | null;
}

/** DMARC passes when either identifier passed aligned (RFC 7489 §6.6.2). */
export const dmarcPasses = (r: Pick<ReportRow, 'dkim_aligned' | 'spf_aligned'>) =>
  r.dkim_aligned === 'pass' || r.spf_aligned === 'pass';

/** An address as compared with svc's own: lower case (IPv6), an IPv4-mapped IPv6 as its IPv4. */
export const canonicalIp = (ip: string) => ip.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');

/**
 * What the rows from svc's own addresses say of its DKIM signing for the domain: one
 * signature of d=<domain> that passed is proof the key works (`confirmed`); `failed` only
 * when svc's rows show DKIM results for the domain and none passed. Rows without a
 * result for the domain say nothing.
 */
export function signingVerdict(rows: StoredRow[], domain: string): SigningStatus | null {
  const ours = rows.filter((r) => r.own_source && r.dkim_domain === domain && r.dkim_result !== null);
  if (ours.some((r) => r.dkim_result === 'pass')) return 'confirmed';
  return ours.length > 0 ? 'failed' : null;
}

/** Reports cover a day (RFC 7489 §7.2: ri=86400 by default); a longer range than this is not believed. */
export const REPORT_MAX_RANGE_DAYS = 31;
/** How far past now a report's range may end: a reporter's clock may run ahead, and a day is a day. */
const REPORT_FUTURE_SLACK_SECONDS = 86_400;

/**
 * Why a report's date range cannot be used, or undefined. Anyone can mail a report, and its
 * range says which emails' DKIM status it moves: it must begin before it ends, span at most
 * REPORT_MAX_RANGE_DAYS and not end in the future (a forged 1970 to 9999 would cover every
 * email; a date past year 275760 would not even be a Date).
 */
export function dateRangeProblem(begin: number, end: number, nowMs: number): string | undefined {
  if (begin > end) return `the report's date range begins after it ends (begin ${begin}, end ${end})`;
  if (end > nowMs / 1000 + REPORT_FUTURE_SLACK_SECONDS)
    return `the report's date range ends in the future (end ${end})`;
  const days = (end - begin) / 86_400;
  if (days > REPORT_MAX_RANGE_DAYS) {
    return `the report's date range spans ${Math.ceil(days)} days, over ${REPORT_MAX_RANGE_DAYS}`;
  }
  return undefined;
}

const iso = (seconds: number, ms = 0) => new Date(seconds * 1000 + ms).toISOString();

/**
 * The plan for recording `report` about the domain `domainId`, given svc's outbound addresses
 * and the address it came from (`senderIp`, null when not mailed).
 */
export function planReport(
  report: AggregateReport,
  ids: { id: string; domainId: string },
  ownAddresses: string[],
  nowIso: string,
  senderIp: string | null = null,
): ReportPlan {
  const own = new Set(ownAddresses.map(canonicalIp));
  const rows = report.rows.map((r) => {
    const ownSource = own.has(canonicalIp(r.source_ip));
    return { ...r, own_source: ownSource, flagged: !ownSource && !dmarcPasses(r) };
  });
  const verdict = signingVerdict(rows, report.domain);
  const from = iso(report.begin);
  // date_range's end is the report's last second (RFC 7489 appendix C: "end" of the range).
  const to = iso(report.end, 999);
  const sender = senderIp === null ? null : canonicalIp(senderIp);
  return {
    report: {
      id: ids.id,
      domain_id: ids.domainId,
      org_name: report.org_name,
      report_id: report.report_id,
      begin_at: from,
      end_at: to,
      policy: report.policy,
      received_at: nowIso,
      sender_ip: sender,
      row_count: rows.length,
    },
    reporter: {
      org_name: report.org_name,
      sender_ip: sender,
      domain: report.domain,
      rows: rows.length,
      since: reporterDayStart(nowIso),
    },
    rows,
    signing: verdict ? { status: verdict, domain: report.domain, from, to } : null,
  };
}

/** A stored row with the day its report begins (UTC). */
export interface DatedRow extends StoredRow {
  begin_at: string;
  org_name: string;
}

/** One line of `svc domains report`: a day and a source IP, its messages and how many passed each check. */
export interface ReportDay {
  day: string;
  source_ip: string;
  count: number;
  spf_pass: number;
  dkim_pass: number;
  dmarc_pass: number;
  own_source: boolean;
  flagged: boolean;
  /** The receivers that reported it. */
  reporters: string[];
}

/** A sum that stops at the largest exact integer: forged reports can pile up counts, the listing stays a listing. */
const add = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER);

/** Rows summed per day and source IP, newest day first, then by count. */
export function summarizeByDay(rows: DatedRow[]): ReportDay[] {
  const days = new Map<string, ReportDay>();
  for (const r of rows) {
    const day = r.begin_at.slice(0, 10);
    const key = `${day} ${r.source_ip}`;
    const d = days.get(key) ?? {
      day,
      source_ip: r.source_ip,
      count: 0,
      spf_pass: 0,
      dkim_pass: 0,
      dmarc_pass: 0,
      own_source: r.own_source,
      flagged: false,
      reporters: [],
    };
    d.count = add(d.count, r.count);
    if (r.spf_aligned === 'pass') d.spf_pass = add(d.spf_pass, r.count);
    if (r.dkim_aligned === 'pass') d.dkim_pass = add(d.dkim_pass, r.count);
    if (dmarcPasses(r)) d.dmarc_pass = add(d.dmarc_pass, r.count);
    d.flagged ||= r.flagged;
    if (!d.reporters.includes(r.org_name)) d.reporters.push(r.org_name);
    days.set(key, d);
  }
  return [...days.values()].sort((a, b) => b.day.localeCompare(a.day) || b.count - a.count);
}
