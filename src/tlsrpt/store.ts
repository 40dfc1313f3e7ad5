import type { CountRow } from './counts.ts';
import type { ClaimPlan, DestinationResult, ReportRow, ReportStatus } from './schedule.ts';

/** A report this node holds: send it, then finish it. */
export type ClaimedReport = ClaimPlan & { day: string; policy_domain: string };

/** The TLS reporting repository both stores implement (repo.ts, repo-pg.ts). */
export interface TlsrptStore {
  /** Adds each row's count to its group's (inserted at 0 when new), all in one transaction. */
  addCounts(rows: CountRow[]): Promise<void>;
  /** The groups counted for a policy domain on a day (its report's content). */
  listCounts(day: string, policyDomain: string): Promise<CountRow[]>;
  /** The policy domains with counts on `day` whose report is not final yet (sent, failed, skipped). */
  listOpenDomains(day: string): Promise<string[]>;
  /**
   * Claims the day's report of a domain for this node when schedule.ts's claimPlan allows it
   * (one node wins across a PostgreSQL cluster); undefined when it is not this node's to send now.
   */
  claimReport(day: string, policyDomain: string, now: number, newReportId: string): Promise<ClaimedReport | undefined>;
  /** Records how the claimed attempt ended: its status, when it may be tried again, each destination's answer. */
  finishReport(
    day: string,
    policyDomain: string,
    outcome: {
      status: ReportStatus;
      next_attempt_at: string | null;
      destinations: DestinationResult[];
      detail: string | null;
    },
    now: string,
  ): Promise<void>;
  /** The reports of days from `since` (YYYY-MM-DD) on, newest day first, then by domain. */
  listReports(since: string): Promise<ReportRow[]>;
}
