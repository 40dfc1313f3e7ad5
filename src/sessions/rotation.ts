import type { RotateResult, TokenWithFamily } from './store.ts';

/** The reason a family revoked for a reused refresh token is recorded with. */
export const REUSED = 'refresh token reused';

/**
 * What presenting a refresh token does, decided from its row as the transaction read it (both
 * stores): refuse it, writing nothing; revoke its family (reuse); or rotate it (mark it used,
 * and the next tokens join its family). The checks' order is the contract's (store.ts, rotate).
 */
export type Rotation =
  { write: 'nothing'; result: RotateResult } | { write: 'revoke' | 'rotate'; familyId: string; result: RotateResult };

export function rotationOf(t: TokenWithFamily | undefined, at: string): Rotation {
  if (!t || t.kind !== 'refresh') return { write: 'nothing', result: { ok: false, reason: 'unknown' } };
  if (t.family_revoked_at) return { write: 'nothing', result: { ok: false, reason: 'revoked' } };
  if (t.used_at) return { write: 'revoke', familyId: t.family_id, result: { ok: false, reason: 'reused' } };
  if (t.expires_at <= at) return { write: 'nothing', result: { ok: false, reason: 'expired' } };
  const result: RotateResult = { ok: true, user_id: t.user_id, family_id: t.family_id };
  return { write: 'rotate', familyId: t.family_id, result };
}
