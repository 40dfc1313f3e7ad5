import { iso, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { runChecks } from './checks.ts';
import type { DnsLookups } from './dns.ts';
import { recordsOf } from './present.ts';
import type { DomainRow, DomainsRepo } from './repo.ts';
import { nextState } from './status.ts';

export interface VerifyDeps {
  repo: DomainsRepo;
  clock: Clock;
  logger: Logger;
  dns: DnsLookups;
  hostname: string;
  gracePeriodMs: number;
}

/** Checks a domain's records, stores the check and the new state, and logs a change of status or warning. */
export async function verifyRow(deps: VerifyDeps, row: DomainRow): Promise<DomainRow | undefined> {
  const run = await runChecks(deps.dns, recordsOf(row, deps.hostname), deps.hostname);
  const now = deps.clock.now();
  const facts = { outcome: run.outcome, summary: run.summary, now, graceMs: deps.gracePeriodMs };
  const result = await deps.repo.recordCheck(row.id, iso(now), JSON.stringify(run.checks), (current) =>
    nextState(current, facts),
  );
  if (result) logChange(deps.logger, result.before, result.after);
  return result?.after;
}

function logChange(logger: Logger, before: DomainRow, after: DomainRow): void {
  const fields = { domain: after.name, status: after.status, warning: after.warning };
  if (before.status !== after.status && after.status === 'FAILED') {
    logger.warn(fields, 'domain unverified: its DKIM or SPF record failed through the grace period');
  } else if (before.status !== after.status) {
    logger.info(fields, `domain ${after.status === 'VERIFIED' ? 'verified' : 'status changed'}`);
  } else if (after.warning && !before.warning) {
    logger.warn(fields, 'domain records failing: it becomes unverified if they stay so through the grace period');
  }
}

/** Verifies every domain one after another (a slow resolver never floods); a failure of one is logged. */
export async function verifyRows(deps: VerifyDeps, ids: string[]): Promise<{ checked: number; errors: number }> {
  let errors = 0;
  for (const id of ids) {
    const row = await deps.repo.findDomainById(id);
    if (!row) continue;
    try {
      await verifyRow(deps, row);
    } catch (e) {
      errors++;
      deps.logger.error({ domain: row.name, err: e }, 'domain check failed');
    }
  }
  return { checked: ids.length, errors };
}
