/**
 * How much one reporter may store about one domain in a day (decisions.md, "a daily limit per
 * reporter"). Anyone can mail a report, and each distinct report_id is stored: without a limit,
 * one sender could fill the disk. A receiver such as Google, Microsoft or Yahoo sends one to
 * three reports a day per domain; the limits are far above that and far below a flood. Both
 * stores count what the reporter stored today and ask this module, in the report's transaction.
 */

/** Reports one reporter (by org_name, and by connecting IP) may store about one domain per UTC day. */
export const REPORTER_DAILY_REPORTS = 50;
/** Rows (source IPs and results) those reports may hold together: five reports at the 20,000-record cap. */
export const REPORTER_DAILY_ROWS = 100_000;

/** What reports stored today about one domain hold. */
export interface ReporterUsage {
  reports: number;
  rows: number;
}

/** Who sends a report: the reporter it names (org_name) and the address it came from, when known. */
export interface ReportingParty {
  org_name: string;
  /** The connecting IP of the SMTP session; null for `svc inbound process`. */
  sender_ip: string | null;
  /** The domain the report is about, and how many rows it holds. */
  domain: string;
  rows: number;
}

/** The first instant of the UTC day of `nowIso`: usage counts reports received since. */
export const reporterDayStart = (nowIso: string) => `${nowIso.slice(0, 10)}T00:00:00.000Z`;

const sentence = (who: string, domain: string, used: ReporterUsage, rows: number): string | undefined => {
  if (used.reports >= REPORTER_DAILY_REPORTS) {
    return `${who} has sent ${used.reports} DMARC reports about ${domain} today, the most one reporter may (${REPORTER_DAILY_REPORTS} a day): try again tomorrow`;
  }
  if (used.rows + rows > REPORTER_DAILY_ROWS) {
    return `the reports ${who} sent about ${domain} today hold ${used.rows} rows; this one's ${rows} would pass the ${REPORTER_DAILY_ROWS} a day one reporter may store: try again tomorrow`;
  }
  return undefined;
};

/**
 * Why the reporter may not store one more report of `rows` rows about `domain` today, or
 * undefined. Counted by its org_name (case aside) and by its connecting IP, each on its own:
 * a sender changing org_name on every report is held by its address, and one naming a real
 * receiver's org_name from elsewhere holds up only that name's reports, for the day.
 */
export function reporterLimitProblem(
  report: ReportingParty,
  used: { org: ReporterUsage; ip: ReporterUsage | null },
): string | undefined {
  const { org_name, sender_ip, domain, rows } = report;
  return (
    sentence(org_name, domain, used.org, rows) ??
    (sender_ip === null || used.ip === null ? undefined : sentence(`the address ${sender_ip}`, domain, used.ip, rows))
  );
}
