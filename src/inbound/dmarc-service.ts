import { isIP } from 'node:net';
import { dmarcReportAddress } from '../domains/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { DnsLookups } from '../lib/dns.ts';
import type { Logger } from '../lib/logger.ts';
import { dateRangeProblem, domainOfReportAddress, planReport, summarizeByDay, type ReportDay } from './dmarc.ts';
import type { ReportReader } from './dmarc-reader.ts';
import type { DmarcStore } from './dmarc-store.ts';

export interface DmarcDeps {
  repo: DmarcStore;
  /** The sending domain of that name, when svc has it. */
  findDomain(name: string): Promise<{ id: string; name: string } | undefined>;
  /** Unpacks and parses a report message off the main thread (dmarc-reader.ts). */
  reader: Pick<ReportReader, 'read'>;
  /** The addresses svc's mail leaves from (its host name's A and AAAA records, the machine's). */
  ownAddresses(): Promise<string[]>;
  clock: Clock;
  logger: Logger;
}

/**
 * svc's own addresses, for a report's rows: what its host name resolves to (what its SPF
 * authorises), the machine's outbound addresses (`local`) and, when mail leaves through a
 * smarthost (--relay), the relay's addresses: mail from there is svc's, not a spoofer's.
 * A lookup failing for now throws: svc's own rows would be recorded as another sender's
 * and flagged, so the reporter retries (451).
 */
export async function serverAddresses(
  dns: Pick<DnsLookups, 'addresses'>,
  hosts: { hostname: string; relayHost: string | null },
  local: () => Promise<string[]>,
): Promise<string[]> {
  const names = hosts.relayHost === null ? [hosts.hostname] : [hosts.hostname, hosts.relayHost];
  const named = await Promise.all(names.map((name) => addressesOf(dns, name)));
  return [...named.flat(), ...(await local())];
}

async function addressesOf(dns: Pick<DnsLookups, 'addresses'>, host: string): Promise<string[]> {
  // A relay given by address (smtp://[2001:db8::25]:587) is its own answer: DNS has no name to ask.
  const literal = host.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal)) return [literal];
  const found = await dns.addresses(host);
  if (!found.ok && found.temporary) {
    throw new Error(`this server's own addresses are unknown for now (${found.reason}): try again later`);
  }
  return found.ok ? found.values : [];
}

/** What receiving one report did: for the log, `svc inbound process` and the SMTP door. */
export interface ReportReceipt {
  domain: string;
  org_name: string;
  report_id: string;
  rows: number;
  /** False when the report was already recorded (a reporter sending it twice). */
  recorded: boolean;
  /** Emails whose dkim_signing_status the report moved, and where to. */
  signing: { status: 'confirmed' | 'failed'; emails: number } | null;
  /** Rows from addresses not svc's that failed DMARC. */
  flagged: { source_ip: string; count: number }[];
}

/** The flagged sources one log line names. */
const LOGGED_FLAGS = 20;

/** Reports older than this are not shown by default. */
export const REPORT_DAYS_DEFAULT = 7;
export const REPORT_DAYS_MAX = 366;

/**
 * DMARC aggregate reports come home (issue 28 item 7): receivers mail them to the rua=
 * address of svc's DMARC record; each is read, stored per domain, used to confirm or fail
 * the DKIM signing of the emails it covers, and its spoofed rows are flagged.
 */
export function createDmarcReports(deps: DmarcDeps) {
  const refuse = (reason: string): never => {
    deps.logger.warn({ reason }, 'inbound: DMARC report refused');
    throw new AppError('report_refused', `DMARC report refused: ${reason}`);
  };

  return {
    /** Whether `address` is a report address of svc (dmarc@bounces.<domain>) of a domain it has. */
    async accepts(address: string): Promise<boolean> {
      const domain = domainOfReportAddress(address);
      return domain !== undefined && (await deps.findDomain(domain)) !== undefined;
    },

    /** Whether `address` has the form of a report address, known domain or not. */
    isReportAddress: (address: string) => domainOfReportAddress(address) !== undefined,

    /**
     * Reads and records one report message mailed from `senderIp` (null when fed by hand); throws
     * report_refused with the reason when it cannot be used, report_limit_reached past the daily limit.
     */
    async receive(raw: Buffer, to: string[], senderIp: string | null = null): Promise<ReportReceipt> {
      const parsed = await deps.reader.read(raw);
      if (!parsed.ok) return refuse(parsed.reason);
      const report = parsed.report;
      const domain = await deps.findDomain(report.domain);
      if (!domain) return refuse(`the report is about ${report.domain}, not a domain of this server`);
      // RFC 7489 §7.2: a receiver sends a domain's reports to the rua= of that domain's own record.
      const addressedTo = to.map(domainOfReportAddress).filter((d) => d !== undefined);
      if (!addressedTo.includes(domain.name)) {
        return refuse(
          `the report is about ${domain.name} but was sent to ${to.join(', ')}: a domain's reports go to the rua= of its own DMARC record, ${dmarcReportAddress(domain.name)}`,
        );
      }
      const now = deps.clock.now();
      const range = dateRangeProblem(report.begin, report.end, now);
      if (range) return refuse(range);
      const own = await deps.ownAddresses();
      const plan = planReport(report, { id: newId(now), domainId: domain.id }, own, iso(now), senderIp);
      const done = await deps.repo.recordReport(plan);
      if (done.limited) {
        deps.logger.warn({ reason: done.limited, sender_ip: senderIp }, 'inbound: DMARC report over the daily limit');
        throw new AppError('report_limit_reached', `DMARC report limit reached: ${done.limited}`);
      }
      const flagged = plan.rows.filter((r) => r.flagged).map((r) => ({ source_ip: r.source_ip, count: r.count }));
      const receipt: ReportReceipt = {
        domain: domain.name,
        org_name: report.org_name,
        report_id: report.report_id,
        rows: plan.rows.length,
        recorded: done.recorded,
        signing: done.recorded && plan.signing ? { status: plan.signing.status, emails: done.emails } : null,
        flagged: done.recorded ? flagged : [],
      };
      // A log line names the first flagged sources and counts them all: a report may hold 20,000.
      const flaggedLogged = {
        flagged: receipt.flagged.slice(0, LOGGED_FLAGS),
        flagged_sources: receipt.flagged.length,
      };
      deps.logger.info({ ...receipt, ...flaggedLogged }, 'inbound: DMARC report received');
      if (receipt.flagged.length > 0) {
        deps.logger.warn(
          { domain: domain.name, org_name: report.org_name, ...flaggedLogged },
          'DMARC: mail from addresses that are not this server failed DMARC for the domain (spoofing, or a sender left out of its records)',
        );
      }
      return receipt;
    },

    /** The domain's report rows of the last `days` days, summed per day and source IP. */
    async listReportDays(domainId: string, days = REPORT_DAYS_DEFAULT): Promise<ReportDay[]> {
      const since = iso(deps.clock.now() - days * 86_400_000).slice(0, 10);
      return summarizeByDay(await deps.repo.listRows(domainId, since));
    },
  };
}

export type DmarcReports = ReturnType<typeof createDmarcReports>;
