// When a day's report of a policy domain is tried, by which node, and when it is given up:
// the decisions both stores execute (repo.ts, repo-pg.ts) and the service follows.

/** How long a node holds a claimed report: past it another node may take the report over. */
export const LEASE_MS = 10 * 60_000;
/** Waits after a failed attempt; a report is tried at most once more than this list is long. */
export const RETRY_WAITS_MS = [15 * 60_000, 60 * 60_000, 3 * 3_600_000, 6 * 3_600_000];
/** A day's report is sent from the following midnight (UTC) plus a random delay up to this (RFC 8460 5.1). */
export const MAX_SEND_DELAY_MS = 10 * 60_000;
/**
 * The least delay: every node flushes its counts each minute (service.ts FLUSH_MS), so two
 * minutes after midnight the day's last minute is in the store on every node before a report
 * that would leave it out is built.
 */
export const MIN_SEND_DELAY_MS = 2 * 60_000;

/** This server's delay after midnight for a random `fraction` in [0, 1). */
export const sendDelayMs = (fraction: number) =>
  MIN_SEND_DELAY_MS + Math.floor(fraction * (MAX_SEND_DELAY_MS - MIN_SEND_DELAY_MS));

export type ReportStatus = 'sending' | 'retry' | 'sent' | 'failed' | 'skipped';
/** Statuses after which a day's report of a domain is never tried again. */
export const FINAL_STATUSES: readonly ReportStatus[] = ['sent', 'failed', 'skipped'];

/** How one rua answered. */
export interface DestinationResult {
  uri: string;
  outcome: 'sent' | 'failed' | 'skipped';
  detail: string | null;
}

/** A day's report of a policy domain as the store keeps it. */
export interface ReportRow {
  day: string;
  policy_domain: string;
  report_id: string;
  status: ReportStatus;
  attempts: number;
  lease_until: string | null;
  next_attempt_at: string | null;
  destinations: DestinationResult[];
  detail: string | null;
  updated_at: string;
}

/** What a claim writes: the report held by this node until `lease_until`. */
export type ClaimPlan = Pick<ReportRow, 'report_id' | 'attempts' | 'lease_until' | 'destinations'>;

/**
 * Whether a node may take the report now: a report nobody has claimed, one waiting for a retry
 * that is due, or one whose node let its lease run out (it stopped mid-send).
 */
export function claimPlan(row: ReportRow | undefined, now: number, newReportId: string): ClaimPlan | undefined {
  const lease_until = new Date(now + LEASE_MS).toISOString();
  if (!row) return { report_id: newReportId, attempts: 1, lease_until, destinations: [] };
  const due =
    (row.status === 'retry' && row.next_attempt_at !== null && Date.parse(row.next_attempt_at) <= now) ||
    (row.status === 'sending' && row.lease_until !== null && Date.parse(row.lease_until) <= now);
  if (!due) return undefined;
  return { report_id: row.report_id, attempts: row.attempts + 1, lease_until, destinations: row.destinations };
}

/** What an attempt ends in: sent when no destination failed; else retried while attempts and the day last. */
export function finishPlan(
  day: string,
  attempts: number,
  destinations: DestinationResult[],
  now: number,
): { status: ReportStatus; next_attempt_at: string | null } {
  if (!destinations.some((d) => d.outcome === 'failed')) return { status: 'sent', next_attempt_at: null };
  const wait = RETRY_WAITS_MS[attempts - 1];
  // The report of `day` is sent during the next day; it is not tried past that day's end.
  const lastChance = Date.parse(`${day}T00:00:00.000Z`) + 2 * 86_400_000;
  if (wait === undefined || now + wait >= lastChance) return { status: 'failed', next_attempt_at: null };
  return { status: 'retry', next_attempt_at: new Date(now + wait).toISOString() };
}

/** The day whose report is due at `now`: yesterday (UTC), once `delayMs` past midnight; else none. */
export function dueDay(now: number, delayMs: number): string | undefined {
  const midnight = Math.floor(now / 86_400_000) * 86_400_000;
  if (now < midnight + delayMs) return undefined;
  return new Date(midnight - 86_400_000).toISOString().slice(0, 10);
}
