import { describe, expect, it } from 'vitest';
import { nextState, type DomainState } from './status.ts';

const H = 3_600_000;
const T0 = Date.parse('2026-03-15T12:00:00.000Z');
const GRACE = 72 * H;
const iso = (ms: number) => new Date(ms).toISOString();

const verified: DomainState = {
  status: 'VERIFIED',
  verified_at: iso(T0 - H),
  failing_since: null,
  failing_checks: 0,
  warning: null,
};
const pending: DomainState = { ...verified, status: 'PENDING', verified_at: null };

const step = (s: DomainState, outcome: 'pass' | 'fail' | 'inconclusive', now: number, graceMs = GRACE) =>
  nextState(s, { outcome, summary: 'DKIM: gone', now, graceMs });

describe('domain state after a check', () => {
  it('verifies a PENDING domain on a pass and leaves it PENDING on a fail', () => {
    expect(step(pending, 'pass', T0)).toMatchObject({ status: 'VERIFIED', verified_at: iso(T0), warning: null });
    expect(step(pending, 'fail', T0)).toEqual(pending);
  });

  it('keeps a failing VERIFIED domain verified with a warning through the grace period, then unverifies it', () => {
    let s = step(verified, 'fail', T0);
    expect(s).toMatchObject({ status: 'VERIFIED', failing_since: iso(T0), failing_checks: 1 });
    expect(s.warning).toContain('DKIM: gone');
    expect(s.warning).toContain(iso(T0 + GRACE));
    s = step(s, 'fail', T0 + GRACE - 1);
    expect(s.status).toBe('VERIFIED');
    s = step(s, 'fail', T0 + GRACE);
    expect(s).toMatchObject({ status: 'FAILED', failing_since: iso(T0), failing_checks: 3 });
    expect(s.warning).toMatch(/^unverified at/);
  });

  it('never unverifies on one failed check, even with no grace period', () => {
    const once = step(verified, 'fail', T0, 0);
    expect(once.status).toBe('VERIFIED');
    expect(step(once, 'fail', T0 + 1, 0).status).toBe('FAILED');
  });

  it('changes nothing on an inconclusive check (SERVFAIL, timeout)', () => {
    const failing = step(verified, 'fail', T0);
    expect(step(failing, 'inconclusive', T0 + 100 * H)).toEqual(failing);
    expect(step(verified, 'inconclusive', T0)).toEqual(verified);
  });

  it('clears the warning on a pass and re-verifies a FAILED domain', () => {
    const failing = step(verified, 'fail', T0);
    expect(step(failing, 'pass', T0 + H)).toEqual(verified);
    const failed: DomainState = { ...failing, status: 'FAILED' };
    expect(step(failed, 'pass', T0 + H)).toEqual({ ...verified, verified_at: iso(T0 + H) });
  });
});
