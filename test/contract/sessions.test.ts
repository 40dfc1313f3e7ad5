// The sessions store (src/sessions/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewToken } from '../../src/sessions/index.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T13:00:00.000Z';
const EXPIRES = '2026-12-26T12:00:00.000Z';

const access = (hash: string, expires = EXPIRES): NewToken => ({
  token_hash: hash,
  kind: 'access',
  expires_at: expires,
});
const refresh = (hash: string, expires = EXPIRES): NewToken => ({
  token_hash: hash,
  kind: 'refresh',
  expires_at: expires,
});

describe.each(STORE_KINDS)('SessionsStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
  });
  afterAll(() => s?.close());

  const family = async (id: string) =>
    (
      await s.query<{ revoked_at: string | null; revoked_reason: string | null }>(
        `SELECT revoked_at, revoked_reason FROM session_families WHERE id = '${id}'`,
      )
    )[0];
  const hashes = async (familyId: string) =>
    (
      await s.query<{ token_hash: string }>(
        `SELECT token_hash FROM session_tokens WHERE family_id = '${familyId}' ORDER BY token_hash`,
      )
    ).map((r) => r.token_hash);

  it('startFamily: the family of the user with its first tokens, created at `at`', async () => {
    await s.store.sessions.startFamily('f1', 'u1', AT, [access('a1'), refresh('r1')]);
    expect(await family('f1')).toEqual({ revoked_at: null, revoked_reason: null });
    expect(await hashes('f1')).toEqual(['a1', 'r1']);
  });

  it('findToken: the token with its family’s user and revocation; undefined when none', async () => {
    expect(await s.store.sessions.findToken('a1')).toEqual({
      token_hash: 'a1',
      family_id: 'f1',
      kind: 'access',
      created_at: AT,
      expires_at: EXPIRES,
      used_at: null,
      user_id: 'u1',
      family_revoked_at: null,
    });
    expect(await s.store.sessions.findToken('missing')).toBeUndefined();
  });

  it('rotate: a live refresh token is marked used and the next tokens join its family', async () => {
    const r = await s.store.sessions.rotate('r1', LATER, [access('a2'), refresh('r2')]);
    expect(r).toEqual({ ok: true, user_id: 'u1', family_id: 'f1' });
    expect((await s.store.sessions.findToken('r1'))?.used_at).toBe(LATER);
    expect(await s.store.sessions.findToken('r2')).toMatchObject({ family_id: 'f1', created_at: LATER, used_at: null });
    expect(await hashes('f1')).toEqual(['a1', 'a2', 'r1', 'r2']);
  });

  it('rotate: unknown for an absent token or an access token, nothing written', async () => {
    expect(await s.store.sessions.rotate('missing', LATER, [refresh('x1')])).toEqual({ ok: false, reason: 'unknown' });
    expect(await s.store.sessions.rotate('a2', LATER, [refresh('x2')])).toEqual({ ok: false, reason: 'unknown' });
    expect(await s.store.sessions.findToken('x1')).toBeUndefined();
    expect(await s.store.sessions.findToken('x2')).toBeUndefined();
    expect((await s.store.sessions.findToken('a2'))?.used_at).toBeNull();
  });

  it('rotate: expired past expires_at (inclusive), nothing written', async () => {
    await s.store.sessions.startFamily('f2', 'u1', AT, [refresh('r-old', LATER)]);
    expect(await s.store.sessions.rotate('r-old', LATER, [refresh('x3')])).toEqual({ ok: false, reason: 'expired' });
    expect((await s.store.sessions.findToken('r-old'))?.used_at).toBeNull();
    expect(await s.store.sessions.findToken('x3')).toBeUndefined();
    expect(await family('f2')).toEqual({ revoked_at: null, revoked_reason: null });
  });

  it('rotate: a used token again is reuse, and the whole family is revoked', async () => {
    expect(await s.store.sessions.rotate('r1', EXPIRES, [refresh('x4')])).toEqual({ ok: false, reason: 'reused' });
    expect(await family('f1')).toEqual({ revoked_at: EXPIRES, revoked_reason: 'refresh token reused' });
    expect(await s.store.sessions.findToken('x4')).toBeUndefined();
    expect((await s.store.sessions.findToken('a2'))?.family_revoked_at).toBe(EXPIRES);
  });

  it('rotate: revoked when its family is, even a live token, nothing written', async () => {
    expect(await s.store.sessions.rotate('r2', LATER, [refresh('x5')])).toEqual({ ok: false, reason: 'revoked' });
    expect((await s.store.sessions.findToken('r2'))?.used_at).toBeNull();
    expect(await s.store.sessions.findToken('x5')).toBeUndefined();
  });

  it('revokeFamily: revokes at `at` for the reason; a revoked family keeps its first; unknown is no error', async () => {
    await s.store.sessions.startFamily('f3', 'u1', AT, [access('a3'), refresh('r3')]);
    await s.store.sessions.revokeFamily('f3', LATER, 'logout');
    expect(await family('f3')).toEqual({ revoked_at: LATER, revoked_reason: 'logout' });
    expect((await s.store.sessions.findToken('a3'))?.family_revoked_at).toBe(LATER);
    await s.store.sessions.revokeFamily('f3', EXPIRES, 'again');
    expect(await family('f3')).toEqual({ revoked_at: LATER, revoked_reason: 'logout' });
    await s.store.sessions.revokeFamily('missing', LATER, 'logout');
    expect(await family('missing')).toBeUndefined();
  });

  it('purgeExpired: deletes tokens expired before `at`, then families left with none', async () => {
    await s.store.sessions.startFamily('f4', 'u1', AT, [access('a4', LATER), refresh('r4', EXPIRES)]);
    await s.store.sessions.startFamily('f5', 'u1', AT, [access('a5', AT), refresh('r5', AT)]);
    await s.store.sessions.purgeExpired(LATER);
    // f2's only token expires at LATER: not before it, kept.
    expect(await hashes('f2')).toEqual(['r-old']);
    expect(await hashes('f4')).toEqual(['a4', 'r4']);
    expect(await hashes('f5')).toEqual([]);
    expect(await family('f5')).toBeUndefined();
    await s.store.sessions.purgeExpired(EXPIRES);
    expect(await hashes('f4')).toEqual(['r4']);
    expect(await family('f2')).toBeUndefined();
    expect(await family('f4')).toEqual({ revoked_at: null, revoked_reason: null });
  });
});
