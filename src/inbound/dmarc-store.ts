import type { DatedRow, ReportPlan } from './dmarc.ts';

/** The DMARC report repository both stores implement (dmarc-repo.ts, dmarc-repo-pg.ts). */
export interface DmarcStore {
  /**
   * Records a report, its rows and the DKIM status of the emails it covers, in one
   * transaction; a report already recorded (same org_name and report_id) changes nothing,
   * nor does one past its reporter's daily limit (`limited` says which: dmarc-limits.ts).
   */
  recordReport(plan: ReportPlan): Promise<{ recorded: boolean; emails: number; limited?: string }>;
  /** The rows of the domain's reports that begin at or after `since`, with their report's day and reporter. */
  listRows(domainId: string, since: string): Promise<DatedRow[]>;
}
