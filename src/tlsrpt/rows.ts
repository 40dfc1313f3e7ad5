// The rows of tls_report_counts and tls_reports as both stores read and write them: JSON
// columns parsed, counts as numbers (PostgreSQL's BIGINT arrives as a string).
import type { CountRow } from './counts.ts';
import type { ReportRow } from './schedule.ts';

export type StoredCount = Omit<CountRow, 'policy_string' | 'count'> & { policy_string: string; count: number | string };
export type StoredReport = Omit<ReportRow, 'destinations' | 'attempts'> & {
  destinations: string;
  attempts: number | string;
};

export const COUNT_COLUMNS = [
  'day',
  'policy_domain',
  'policy_type',
  'policy_string',
  'mx_host',
  'receiving_ip',
  'sending_ip',
  'result',
  'failure_reason',
] as const;

/** A count row's key columns in COUNT_COLUMNS's order, then its count. */
export const countParams = (r: CountRow): (string | number)[] => [
  ...COUNT_COLUMNS.map((c) => (c === 'policy_string' ? JSON.stringify(r.policy_string) : r[c])),
  r.count,
];

export const countOf = (r: StoredCount): CountRow => ({
  ...r,
  policy_string: JSON.parse(r.policy_string) as string[],
  count: Number(r.count),
});

export const reportOf = (r: StoredReport): ReportRow => ({
  ...r,
  attempts: Number(r.attempts),
  destinations: JSON.parse(r.destinations) as ReportRow['destinations'],
});
