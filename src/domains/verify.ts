import { iso, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import { runChecks } from './checks.ts';
import { afterCheck, keysOf, type DkimKeyRow } from './dkim-keys.ts';
import type { DnsLookups } from '../lib/dns.ts';
import { logSteps, withAudits, type Change } from './key-steps.ts';
import { recordsOf } from './present.ts';
import { dkimName, type RecordCheck } from './records.ts';
import type { DomainRow, DomainsStore, PlanKeys } from './store.ts';
import { nextState } from './status.ts';
import { notice, type Notice } from '../events/index.ts';

export interface VerifyDeps {
  repo: DomainsStore;
  clock: Clock;
  logger: Logger;
  dns: DnsLookups;
  hostname: string;
  gracePeriodMs: number;
  /** How long a replaced DKIM key's record stays listed after the switch (--dkim-rotation-grace). */
  dkimGraceMs: number;
  /** Builds audit rows: each DKIM key step a check causes is audited. */
  change: Change;
}

/** Whether the check found `key`'s record published with its public key. */
const seen = (checks: RecordCheck[], domain: string) => (key: DkimKeyRow) =>
  checks.some(
    (c) => c.ok && c.type === 'TXT' && c.name === dkimName(key.selector, domain) && c.purpose === 'dkim-next',
  );

/**
 * Checks a domain's records, stores the check and the new state, and logs a
 * change of status or warning. In the same transaction, a rotation's new DKIM key
 * whose record was seen starts signing and a retiring key past its grace retires
 * (dkim-keys.ts afterCheck), each step audited as `actor` and logged. A check cut
 * short by `signal` (the server stopping) stores nothing: its cancelled lookups say
 * nothing of the records.
 */
export async function verifyRow(
  deps: VerifyDeps,
  row: DomainRow,
  signal?: AbortSignal,
  audited?: (before: DomainRow, after: DomainRow) => Audited,
  actor: Actor = operator(),
): Promise<DomainRow | undefined> {
  const keys = await deps.repo.listDkimKeys(row.id);
  const run = await runChecks(deps.dns, recordsOf(row, deps.hostname, keys), deps.hostname);
  if (signal?.aborted) return undefined;
  const now = deps.clock.now();
  const facts = { outcome: run.outcome, summary: run.summary, now, graceMs: deps.gracePeriodMs };
  const planKeys: PlanKeys = (rows, current) =>
    withAudits(
      deps.change,
      actor,
      current,
      afterCheck(keysOf(current, rows), seen(run.checks, current.name), now, deps.dkimGraceMs),
    );
  const result = await deps.repo.recordCheck(
    row.id,
    iso(now),
    JSON.stringify(run.checks),
    (current) => nextState(current, facts),
    audited,
    planKeys,
    verificationNotice,
  );
  if (result) logChange(deps.logger, result.before, result.after);
  if (result?.keys) logSteps(deps.logger, row.name, result.keys.steps);
  return result?.after;
}

/**
 * `domain.verification_changed` (issue 35): a check moved the domain's status (PENDING to
 * VERIFIED, VERIFIED to FAILED after the grace period, FAILED to VERIFIED); undefined when the
 * status stayed. The body names the domain, both statuses, the warning, and the required or
 * recommended records the check found failing with their reasons.
 */
function verificationNotice(before: DomainRow, after: DomainRow): Notice | undefined {
  if (before.status === after.status) return undefined;
  const checks = JSON.parse(after.checks ?? '[]') as RecordCheck[];
  return notice('domain.verification_changed', after.last_checked_at ?? after.created_at, {
    domain: {
      id: after.id,
      name: after.name,
      status: after.status,
      previous_status: before.status,
      verified_at: after.verified_at,
      warning: after.warning,
      failing_records: checks
        .filter((c) => !c.ok)
        .map((c) => ({ type: c.type, name: c.name, purpose: c.purpose, reason: c.reason })),
    },
  });
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
