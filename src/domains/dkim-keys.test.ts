import { describe, expect, it } from 'vitest';
import {
  addMonths,
  addPendingKeys,
  afterCheck,
  keysOf,
  listedKeys,
  rotatedAlgorithms,
  rotationDue,
  rotationPending,
  signingKeys,
  stopAlgorithm,
  uniqueSelector,
  type DkimKeyRow,
} from './dkim-keys.ts';

const NOV = Date.parse('2026-11-27T12:00:00Z');
const DAY = 86_400_000;
const WEEK = 7 * DAY;

const key = (over: Partial<DkimKeyRow>): DkimKeyRow => ({
  id: over.selector ?? 'k',
  domain_id: 'd1',
  selector: 'svc202605',
  algorithm: 'rsa',
  private_key: 'PEM',
  public_key: 'PUB',
  state: 'active',
  created_at: '2026-05-01T00:00:00.000Z',
  activated_at: '2026-05-01T00:00:00.000Z',
  retire_after: null,
  ...over,
});

const domain = {
  id: 'd1',
  dkim_selector: 'svc202605',
  dkim_private_key: 'PEM',
  dkim_public_key: 'PUB',
  created_at: '2026-05-01T00:00:00.000Z',
  verified_at: '2026-05-02T00:00:00.000Z',
};

describe('keysOf', () => {
  it("reads a domain stored without key rows as its dkim_* columns' active RSA key, under the domain's id", () => {
    expect(keysOf(domain, [])).toEqual([key({ id: 'd1', activated_at: '2026-05-02T00:00:00.000Z' })]);
    expect(keysOf({ ...domain, dkim_private_key: null }, [])).toEqual([]);
    const rows = [key({ selector: 'svc202611' })];
    expect(keysOf(domain, rows)).toBe(rows);
  });

  it('keeps such a domain signing with its columns while its first rotation is pending, and retires them once seen', () => {
    const pending = key({ id: 'p', selector: 'svc202611', state: 'pending', activated_at: null });
    const keys = keysOf(domain, [pending]);
    expect(signingKeys(keys).map((k) => k.selector)).toEqual(['svc202605']);
    const plan = afterCheck(keys, (k) => k.id === 'p', NOV, WEEK);
    expect(plan.save.map((k) => [k.id, k.state])).toEqual([
      ['p', 'active'],
      ['d1', 'retiring'],
    ]);
  });
});

describe('selectors', () => {
  it('are svc<yyyymm> (RSA) and svc<yyyymm>ed (Ed25519), with -2, -3 when the month already took them', () => {
    expect(uniqueSelector(NOV, 'rsa', ['svc202605'])).toBe('svc202611');
    expect(uniqueSelector(NOV, 'rsa', ['svc202611'])).toBe('svc202611-2');
    expect(uniqueSelector(NOV, 'rsa', ['svc202611', 'svc202611-2'])).toBe('svc202611-3');
    expect(uniqueSelector(NOV, 'ed25519', ['svc202611'])).toBe('svc202611ed');
  });
});

describe('a rotation', () => {
  const old = key({});
  const fresh = { id: 'new', algorithm: 'rsa' as const, privateKeyPem: 'PEM2', publicKeyB64: 'PUB2' };

  it('adds a pending key under a new selector that does not sign until its record is seen', () => {
    const plan = addPendingKeys('d1', [old], [fresh], NOV);
    expect(plan.save).toEqual([
      expect.objectContaining({ id: 'new', selector: 'svc202611', state: 'pending', activated_at: null }),
    ]);
    expect(plan.steps.map((s) => s.action)).toEqual(['dkim_rotation_started']);
    const keys = [old, ...plan.save];
    expect(rotationPending(keys)).toBe(true);
    expect(signingKeys(keys).map((k) => k.selector)).toEqual(['svc202605']);
    // Not seen: nothing changes.
    expect(afterCheck(keys, () => false, NOV + DAY, WEEK).save).toEqual([]);
  });

  it('switches to the new key once seen, keeps the old one retiring for the grace period, then retires it', () => {
    const pending = addPendingKeys('d1', [old], [fresh], NOV).save;
    const seenAt = NOV + DAY;
    const switched = afterCheck([old, ...pending], (k) => k.id === 'new', seenAt, WEEK);
    expect(switched.steps.map((s) => [s.action, s.key.selector, s.replaces?.selector])).toEqual([
      ['dkim_key_activated', 'svc202611', 'svc202605'],
    ]);
    expect(switched.activeRsa?.selector).toBe('svc202611');
    const keys = [...switched.save, ...[old, ...pending].filter((k) => !switched.save.some((s) => s.id === k.id))];
    expect(signingKeys(keys).map((k) => k.selector)).toEqual(['svc202611']);
    expect(keys.find((k) => k.id === old.id)).toMatchObject({
      state: 'retiring',
      retire_after: new Date(seenAt + WEEK).toISOString(),
    });
    expect(listedKeys(keys).map((k) => [k.selector, k.state])).toEqual([
      ['svc202605', 'retiring'],
      ['svc202611', 'active'],
    ]);
    // One millisecond before the grace period ends: still retiring.
    expect(afterCheck(keys, () => true, seenAt + WEEK - 1, WEEK).save).toEqual([]);
    const retired = afterCheck(keys, () => true, seenAt + WEEK, WEEK);
    expect(retired.steps.map((s) => [s.action, s.key.selector])).toEqual([['dkim_key_retired', 'svc202605']]);
    expect(retired.activeRsa).toBeUndefined();
  });

  it('renews every algorithm the domain signs with, RSA always', () => {
    const ed = key({ selector: 'svc202605ed', algorithm: 'ed25519' });
    expect(rotatedAlgorithms([old])).toEqual(['rsa']);
    expect(rotatedAlgorithms([old, ed])).toEqual(['rsa', 'ed25519']);
    expect(rotatedAlgorithms([old, { ...ed, state: 'retiring' }])).toEqual(['rsa']);
    expect(signingKeys([ed, old]).map((k) => k.algorithm)).toEqual(['rsa', 'ed25519']);
  });
});

describe('listedKeys', () => {
  it('lists live keys and only the latest retired key of each algorithm, oldest first', () => {
    const keys = [
      key({ selector: 'a', state: 'retired', retire_after: '2026-06-01T00:00:00.000Z' }),
      key({ selector: 'b', state: 'retired', retire_after: '2026-09-01T00:00:00.000Z' }),
      key({ selector: 'c', state: 'active', created_at: '2026-08-01T00:00:00.000Z' }),
      key({ selector: 'e', algorithm: 'ed25519', state: 'pending', created_at: '2026-01-01T00:00:00.000Z' }),
    ];
    expect(listedKeys(keys).map((k) => k.selector)).toEqual(['b', 'c', 'e']);
  });
});

describe('stopAlgorithm (Ed25519 off)', () => {
  it('retires a pending Ed25519 key at once and lets an active one retire through the grace period', () => {
    const keys = [
      key({}),
      key({ selector: 'e1', algorithm: 'ed25519', state: 'active' }),
      key({ selector: 'e2', algorithm: 'ed25519', state: 'pending' }),
    ];
    const plan = stopAlgorithm(keys, 'ed25519', NOV, WEEK);
    expect(plan.save.map((k) => [k.selector, k.state, k.retire_after])).toEqual([
      ['e1', 'retiring', new Date(NOV + WEEK).toISOString()],
      ['e2', 'retired', new Date(NOV).toISOString()],
    ]);
  });
});

describe('automatic rotation', () => {
  it('is due once the active RSA key has signed N calendar months, never when off or mid-rotation', () => {
    const active = key({ activated_at: '2026-05-27T12:00:00.000Z' });
    expect(rotationDue([active], NOV, 0)).toBe(false);
    expect(rotationDue([active], NOV, 6)).toBe(true);
    expect(rotationDue([active], NOV - 1, 6)).toBe(false);
    expect(rotationDue([active, key({ selector: 'n', state: 'pending' })], NOV, 6)).toBe(false);
    expect(addMonths(Date.parse('2026-01-31T00:00:00Z'), 1)).toBe(Date.parse('2026-03-03T00:00:00Z'));
  });
});
