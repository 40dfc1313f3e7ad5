import { describe, expect, it } from 'vitest';
import { rotationOf } from './rotation.ts';
import type { TokenWithFamily } from './store.ts';

const AT = '2026-11-26T12:00:00.000Z';
const LATER = '2026-11-26T13:00:00.000Z';

const token = (over: Partial<TokenWithFamily> = {}): TokenWithFamily => ({
  token_hash: 'h',
  family_id: 'f1',
  kind: 'refresh',
  created_at: AT,
  expires_at: LATER,
  used_at: null,
  user_id: 'u1',
  family_revoked_at: null,
  ...over,
});

describe('rotationOf', () => {
  it.each([
    ['absent', undefined, { write: 'nothing', result: { ok: false, reason: 'unknown' } }],
    ['an access token', token({ kind: 'access' }), { write: 'nothing', result: { ok: false, reason: 'unknown' } }],
    [
      'its family revoked, even used and expired',
      token({ family_revoked_at: AT, used_at: AT, expires_at: AT }),
      { write: 'nothing', result: { ok: false, reason: 'revoked' } },
    ],
    [
      'used already, even expired: reuse',
      token({ used_at: AT, expires_at: AT }),
      { write: 'revoke', familyId: 'f1', result: { ok: false, reason: 'reused' } },
    ],
    [
      'expiring at the instant',
      token({ expires_at: AT }),
      { write: 'nothing', result: { ok: false, reason: 'expired' } },
    ],
    ['live', token(), { write: 'rotate', familyId: 'f1', result: { ok: true, user_id: 'u1', family_id: 'f1' } }],
  ])('%s', (_name, t, expected) => {
    expect(rotationOf(t, AT)).toEqual(expected);
  });
});
