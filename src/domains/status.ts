import { iso } from '../lib/clock.ts';
import type { Outcome } from './checks.ts';

export type DomainStatus = 'PENDING' | 'VERIFIED' | 'FAILED';

/** What a check changes on a domain. */
export interface DomainState {
  status: DomainStatus;
  verified_at: string | null;
  failing_since: string | null;
  failing_checks: number;
  warning: string | null;
}

export interface CheckFacts {
  outcome: Outcome;
  /** Reasons of the failing required records. */
  summary: string;
  now: number;
  /** How long records may fail before a verified domain becomes unverified. */
  graceMs: number;
}

/** Failing checks needed before unverifying, whatever the grace period: one bad lookup is never enough. */
export const MIN_FAILING_CHECKS = 2;

const CLEARED = { failing_since: null, failing_checks: 0, warning: null } as const;

/**
 * The state after a check. A pass verifies; a fail only unverifies a VERIFIED
 * domain after failures lasting the grace period over at least two checks
 * (until then it carries a warning); an inconclusive check (SERVFAIL,
 * timeout) changes nothing. A PENDING domain stays PENDING until it passes.
 */
export function nextState(s: DomainState, f: CheckFacts): DomainState {
  switch (f.outcome) {
    case 'pass':
      return { ...CLEARED, status: 'VERIFIED', verified_at: s.status === 'VERIFIED' ? s.verified_at : iso(f.now) };
    case 'inconclusive':
      return s;
    case 'fail':
      return s.status === 'VERIFIED' ? failVerified(s, f) : s;
  }
}

function failVerified(s: DomainState, f: CheckFacts): DomainState {
  const since = s.failing_since ?? iso(f.now);
  const checks = s.failing_checks + 1;
  const deadline = Date.parse(since) + f.graceMs;
  if (checks >= MIN_FAILING_CHECKS && f.now >= deadline) {
    const warning = `unverified at ${iso(f.now)}: records failing since ${since} (${f.summary})`;
    return { ...s, status: 'FAILED', failing_since: since, failing_checks: checks, warning };
  }
  const warning =
    `records failing since ${since} (${f.summary}); ` +
    `the domain becomes unverified at ${iso(deadline)} unless a check passes before`;
  return { ...s, failing_since: since, failing_checks: checks, warning };
}
