import { iso, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Audited } from '../audit/index.ts';
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

/**
 * Checks a domain's records, stores the check and the new state, and logs a
 * change of status or warning. A check cut short by `signal` (the server
 * stopping) stores nothing: its cancelled lookups say nothing of the records.
 */
export async function verifyRow(
  deps: VerifyDeps,
  row: DomainRow,
  signal?: AbortSignal,
  audited?: (before: DomainRow, after: DomainRow) => Audited,
): Promise<DomainRow | undefined> {
  const run = await runChecks(deps.dns, recordsOf(row, deps.hostname), deps.hostname);
  if (signal?.aborted) return undefined;
  const now = deps.clock.now();
  const facts = { outcome: run.outcome, summary: run.summary, now, graceMs: deps.gracePeriodMs };
  const result = await deps.repo.recordCheck(
    row.id,
    iso(now),
    JSON.stringify(run.checks),
    (current) => nextState(current, facts),
    audited,
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

/**
 * Verifies every domain one after another (a slow resolver never floods); a
 * failure of one is logged. `signal` stops the run: the lookups in flight are
 * cancelled and no further domain is checked.
 */
export async function verifyRows(
  deps: VerifyDeps,
  ids: string[],
  signal?: AbortSignal,
): Promise<{ checked: number; errors: number }> {
  let errors = 0;
  const cancel = () => deps.dns.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    for (const id of ids) {
      if (signal?.aborted) break;
      const row = await deps.repo.findDomainById(id);
      if (!row) continue;
      try {
        await verifyRow(deps, row, signal);
      } catch (e) {
        errors++;
        deps.logger.error({ domain: row.name, err: e }, 'domain check failed');
      }
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
  return { checked: ids.length, errors };
}
