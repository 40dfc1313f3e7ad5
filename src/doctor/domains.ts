import type { DomainsStore } from '../domains/index.ts';
import type { ReportDay } from '../inbound/index.ts';
import { REQUIRED, recordsOf, runChecks, type RecordCheck } from '../domains/index.ts';
import type { DoctorCheck } from './check.ts';
import type { DoctorDns } from './dns.ts';

export interface DomainChecksDeps {
  repo: Pick<DomainsStore, 'listDomainIds' | 'findDomainById'>;
  dns: DoctorDns;
  hostname: string;
  /** The domain's DMARC aggregate report days of the last week (`svc domains report`). */
  reports?: ((domainId: string) => Promise<Pick<ReportDay, 'source_ip' | 'count' | 'flagged'>[]>) | undefined;
  /** Stops the checks between domains (the server stopping). */
  signal?: AbortSignal | undefined;
}

/**
 * Each domain's DKIM, SPF, DMARC and return-path records, looked up now with the domain
 * checks' own rules (domains/checks.ts), read-only: nothing is stored, no status changes
 * (the periodic domain check does that). A required record (DKIM, SPF) that fails is a
 * failure; a recommended one, or a lookup that failed for now, a warning.
 */
export async function checkDomains(deps: DomainChecksDeps): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  for (const id of await deps.repo.listDomainIds()) {
    deps.signal?.throwIfAborted();
    const row = await deps.repo.findDomainById(id);
    if (!row) continue;
    const run = await runChecks(deps.dns, recordsOf(row, deps.hostname), deps.hostname);
    const inconclusive = run.outcome === 'inconclusive';
    checks.push(...run.checks.map((c) => fromRecordCheck(row.name, c, inconclusive)));
    const flagged = (await deps.reports?.(id))?.filter((r) => r.flagged) ?? [];
    if (flagged.length > 0) checks.push(spoofedCheck(row.name, flagged));
  }
  return checks;
}

/** The flagged addresses a dmarc_reports warning names; `svc domains report` lists them all. */
const SHOWN_IPS = 5;

/** Mail from addresses not svc's failed DMARC in the domain's aggregate reports: a warning, mail still flows. */
function spoofedCheck(domain: string, flagged: Pick<ReportDay, 'source_ip' | 'count'>[]): DoctorCheck {
  const ips = [...new Set(flagged.map((r) => r.source_ip))];
  const messages = flagged.reduce((n, r) => n + r.count, 0);
  // One line, however many addresses a report names (the largest senders come first).
  const from =
    ips.length > SHOWN_IPS
      ? `${ips.slice(0, SHOWN_IPS).join(', ')} and ${ips.length - SHOWN_IPS} more`
      : ips.join(', ');
  return {
    check: 'dmarc_reports',
    subject: domain,
    status: 'warn',
    detail: `DMARC reports of the last 7 days: ${messages} messages from ${from}, not this server, failed DMARC`,
    fix: `see svc domains report ${domain}: add a sender of yours to the domain's SPF and DKIM, or, if someone spoofs it, move its DMARC policy to p=quarantine`,
  };
}

function fromRecordCheck(domain: string, c: RecordCheck, inconclusive: boolean): DoctorCheck {
  const check = c.purpose.replace('-', '_');
  const subject = domain;
  if (c.ok) return { check, subject, status: 'ok', detail: `${c.type} ${c.name} matches`, fix: null };
  const required = REQUIRED.includes(c.purpose) && !inconclusive;
  return {
    check,
    subject,
    status: required ? 'fail' : 'warn',
    detail: c.reason ?? `${c.type} ${c.name} does not match`,
    fix: `publish the ${c.type} record at ${c.name} that svc domains show ${domain} prints`,
  };
}
