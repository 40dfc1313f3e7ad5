// The aggregate report of one policy domain and day (RFC 8460 section 4), and how it is named
// and labelled when sent (section 5). Pure: the same bytes from either store's rows.
import type { CountRow } from './counts.ts';

export interface ReportInput {
  day: string;
  policyDomain: string;
  reportId: string;
  /** organization-name and the submitter of sections 5.3 and 5.4: the server's host name. */
  submitter: string;
  /** contact-info: the reports' From address, or postmaster at the host name. */
  contact: string;
  rows: CountRow[];
}

interface FailureDetail {
  'result-type': string;
  'sending-mta-ip'?: string;
  'receiving-mx-hostname'?: string;
  'receiving-ip'?: string;
  'failed-session-count': number;
  'failure-reason-code'?: string;
}

/** The start and end of a UTC day as the report's date-range writes them. */
export function dayRange(day: string): { start: string; end: string } {
  return { start: `${day}T00:00:00Z`, end: `${day}T23:59:59Z` };
}

/** The report's JSON object: one policy per (type, policy string), each with its summary and failure details. */
export function buildReport(r: ReportInput) {
  const groups = new Map<string, CountRow[]>();
  for (const row of r.rows) {
    const key = JSON.stringify([row.policy_type, row.policy_string]);
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const { start, end } = dayRange(r.day);
  return {
    'organization-name': r.submitter,
    'date-range': { 'start-datetime': start, 'end-datetime': end },
    'contact-info': r.contact,
    'report-id': r.reportId,
    policies: [...groups.values()].map((rows) => policyOf(r.policyDomain, rows)),
  };
}

function policyOf(domain: string, rows: CountRow[]) {
  const first = rows[0]!;
  const sum = (of: CountRow[]) => of.reduce((n, x) => n + x.count, 0);
  const failures = rows.filter((x) => x.result !== 'success');
  return {
    policy: {
      'policy-type': first.policy_type,
      ...(first.policy_type === 'no-policy-found' ? {} : { 'policy-string': first.policy_string }),
      'policy-domain': domain,
      ...mxHostOf(first.policy_type, first.policy_string, rows),
    },
    summary: {
      'total-successful-session-count': sum(rows) - sum(failures),
      'total-failure-session-count': sum(failures),
    },
    ...(failures.length ? { 'failure-details': failures.map(detailOf) } : {}),
  };
}

/** mx-host: an MTA-STS policy's mx patterns; for the others, the MX hosts tried. */
function mxHostOf(type: CountRow['policy_type'], policy: string[], rows: CountRow[]) {
  const hosts =
    type === 'sts'
      ? policy.flatMap((line) => /^mx\s*:\s*(\S+)/.exec(line)?.[1] ?? [])
      : [...new Set(rows.map((x) => x.mx_host).filter((h) => h !== ''))];
  return hosts.length ? { 'mx-host': hosts } : {};
}

function detailOf(x: CountRow): FailureDetail {
  return {
    'result-type': x.result,
    ...(x.sending_ip ? { 'sending-mta-ip': x.sending_ip } : {}),
    ...(x.mx_host ? { 'receiving-mx-hostname': x.mx_host } : {}),
    ...(x.receiving_ip ? { 'receiving-ip': x.receiving_ip } : {}),
    'failed-session-count': x.count,
    ...(x.failure_reason ? { 'failure-reason-code': x.failure_reason } : {}),
  };
}

/** Seconds since the epoch, as section 5.3's file name writes the range. */
const epoch = (iso: string) => String(Math.floor(Date.parse(iso) / 1000));

/** How a report is labelled by mail (section 5.3): the attachment's name, the subject and the headers. */
export function mailLabels(r: Pick<ReportInput, 'day' | 'policyDomain' | 'reportId' | 'submitter'>) {
  const { start, end } = dayRange(r.day);
  const unique = r.reportId.replace(/[^A-Za-z0-9._-]/g, '_');
  return {
    filename: `${r.submitter}!${r.policyDomain}!${epoch(start)}!${epoch(end)}!${unique}.json.gz`,
    subject: `Report Domain: ${r.policyDomain} Submitter: ${r.submitter} Report-ID: <${r.reportId}>`,
    headers: { 'TLS-Report-Domain': r.policyDomain, 'TLS-Report-Submitter': r.submitter },
  };
}
