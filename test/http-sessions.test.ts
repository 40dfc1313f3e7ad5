import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../src/sessions/index.ts';
import { createTestEnv, type TestEnv } from './harness.ts';

// Management API sessions (contract, "Authentication" 7; decisions.md, "Keys, sessions, roles").

let env: TestEnv;
afterEach(() => env.close());

const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };
const MINUTE = 60_000;

type Res = LightMyRequestResponse;
const login = (body: unknown, remoteAddress = '203.0.113.1') =>
  env.server.inject({ method: 'POST', url: '/v1/auth/login', payload: body as object, remoteAddress });
const cookieOf = (res: Res) => res.cookies.find((c) => c.name === 'svc_refresh');
const refresh = (token: string | undefined) =>
  env.server.inject({ method: 'POST', url: '/v1/auth/refresh', cookies: token ? { svc_refresh: token } : {} });
const orgs = (token: string) =>
  env.server.inject({ method: 'GET', url: '/v1/organizations', headers: { authorization: `Bearer ${token}` } });
const accessOf = (res: Res) => res.json<{ data: { access_token: string } }>().data.access_token;
const codeOf = (res: Res) => res.json<{ error: { code: string } }>().error.code;

describe('POST /v1/auth/login', () => {
  it('answers an access token for 15 minutes and sets the HttpOnly, SameSite=Strict refresh cookie', async () => {
    env = await createTestEnv();
    const res = await login(OWNER);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(Object.keys(data).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(data).toMatchObject({ token_type: 'bearer', expires_in: 900 });
    const cookie = cookieOf(res)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/v1/auth', maxAge: 30 * 24 * 3600 });
    // The test server listens on loopback over plain HTTP: the one case the cookie may lack Secure.
    expect(cookie.secure).toBeUndefined();
    expect(cookie.value).not.toBe(data.access_token);
    const list = await orgs(data.access_token);
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([
      expect.objectContaining({ id: env.init.organization_id, name: 'Acme', role: 'OWNER' }),
    ]);
  });

  it('marks the cookie Secure on a server others can reach', async () => {
    env = await createTestEnv({ httpHost: '0.0.0.0' });
    expect(cookieOf(await login(OWNER))!.secure).toBe(true);
  });

  it('gives a wrong password and an unknown address the same 401', async () => {
    env = await createTestEnv();
    const wrong = await login({ ...OWNER, password: 'not-the-password' });
    const unknown = await login({ email: 'nobody@example.com', password: 'not-the-password' });
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'unauthorized', message: 'Wrong email or password' });
      expect(cookieOf(res)).toBeUndefined();
    }
  });

  it.each([
    [{}, 'email'],
    [{ email: 'owner@example.com' }, 'password'],
    [{ ...OWNER, remember: true }, ''],
  ])('refuses a malformed body %j with 422', async (body, field) => {
    env = await createTestEnv();
    const res = await login(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('request_validation_failed');
    if (field) expect(res.json().error.details.fields[0].field).toBe(field);
  });

  it('limits failed logins per address and IP, also for the right password, until the window ends (429 with Retry-After)', async () => {
    env = await createTestEnv();
    for (let i = 0; i < LOGIN_LIMITS.perAddressAndIp; i++) {
      expect((await login({ ...OWNER, password: 'guess' }, '198.51.100.7')).statusCode).toBe(401);
    }
    const blocked = await login(OWNER, '198.51.100.7');
    expect(blocked.statusCode).toBe(429);
    expect(codeOf(blocked)).toBe('rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBe(15 * 60);
    env.clock.advance(15 * MINUTE);
    expect((await login(OWNER, '198.51.100.7')).statusCode).toBe(200);
  });

  it('lets nobody lock an address out: after many wrong passwords from one IP, the right one from another gets in', async () => {
    env = await createTestEnv();
    for (let i = 0; i < LOGIN_LIMITS.perAddress + 5; i++) {
      const res = await login({ ...OWNER, password: 'guess' }, '198.51.100.7');
      expect(res.statusCode).toBe(i < LOGIN_LIMITS.perAddressAndIp ? 401 : 429);
      if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect((await login(OWNER, '203.0.113.50')).statusCode).toBe(200);
    // The same address spelt in another case is the same address, for the guesser too.
    expect((await login({ ...OWNER, email: 'OWNER@example.com' }, '198.51.100.7')).statusCode).toBe(429);
  });

  it('brakes a guesser spread over many IPs: past the per-address count an IP that failed is slowed, a clean one gets in', async () => {
    env = await createTestEnv();
    const guesser = (i: number) => `198.51.100.${i + 1}`;
    const first = LOGIN_LIMITS.brakeFirstMs / 1000;
    for (let i = 0; i < LOGIN_LIMITS.perAddress; i++) {
      expect((await login({ ...OWNER, password: 'guess' }, guesser(i))).statusCode).toBe(401);
    }
    // Each of those IPs has one failure for the address: now it waits, even with the right password.
    const braked = await login(OWNER, guesser(0));
    expect([braked.statusCode, codeOf(braked)]).toEqual([429, 'rate_limited']);
    expect(Number(braked.headers['retry-after'])).toBe(first);
    // A new IP gets one try, then waits too.
    expect((await login({ ...OWNER, password: 'guess' }, '192.0.2.1')).statusCode).toBe(401);
    expect((await login({ ...OWNER, password: 'guess' }, '192.0.2.1')).statusCode).toBe(429);
    // The owner, from an IP without failures, signs in.
    expect((await login(OWNER, '203.0.113.50')).statusCode).toBe(200);
    // Each failure doubles the guesser's wait: 5 s after its first, 10 s after its second, 20 s after its third.
    for (const wait of [2 * first, 4 * first]) {
      env.clock.advance(wait * 500);
      expect((await login({ ...OWNER, password: 'guess' }, guesser(0))).statusCode).toBe(401);
      expect(Number((await login(OWNER, guesser(0))).headers['retry-after'])).toBe(wait);
    }
    env.clock.advance(15 * MINUTE);
    expect((await login(OWNER, guesser(0))).statusCode).toBe(200);
  });

  it('does not lock the owner out during a spread attack: a mistype from their own IP costs seconds, not the window', async () => {
    env = await createTestEnv();
    for (let i = 0; i < LOGIN_LIMITS.perAddress; i++) {
      expect((await login({ ...OWNER, password: 'guess' }, `198.51.100.${i + 1}`)).statusCode).toBe(401);
    }
    env.clock.advance(MINUTE);
    expect((await login({ ...OWNER, password: 'typo' }, '203.0.113.50')).statusCode).toBe(401);
    const wait = await login(OWNER, '203.0.113.50');
    expect([wait.statusCode, codeOf(wait)]).toEqual([429, 'rate_limited']);
    expect(Number(wait.headers['retry-after'])).toBe(LOGIN_LIMITS.brakeFirstMs / 1000);
    env.clock.advance(LOGIN_LIMITS.brakeFirstMs);
    expect((await login(OWNER, '203.0.113.50')).statusCode).toBe(200);
  });

  it('counts an IPv6 client by its /64', async () => {
    env = await createTestEnv();
    for (let i = 0; i < LOGIN_LIMITS.perAddressAndIp; i++) {
      expect((await login({ ...OWNER, password: 'guess' }, `2001:db8:1:2::${i + 1}`)).statusCode).toBe(401);
    }
    expect((await login(OWNER, '2001:db8:1:2:ffff::9')).statusCode).toBe(429);
    expect((await login(OWNER, '2001:db8:1:3::1')).statusCode).toBe(200);
  });

  it('limits failed logins per client IP across addresses', async () => {
    env = await createTestEnv();
    for (let i = 0; i < LOGIN_LIMITS.perIp; i++) {
      expect((await login({ email: `u${i}@example.com`, password: 'guess' })).statusCode).toBe(401);
    }
    expect((await login(OWNER)).statusCode).toBe(429);
    expect((await login(OWNER, '203.0.113.99')).statusCode).toBe(200);
  });
});

describe('the session lifecycle', () => {
  it('expires the access token after 15 minutes', async () => {
    env = await createTestEnv();
    const token = accessOf(await login(OWNER));
    env.clock.advance(15 * MINUTE - 1);
    expect((await orgs(token)).statusCode).toBe(200);
    env.clock.advance(1);
    const expired = await orgs(token);
    expect(expired.statusCode).toBe(401);
    expect(codeOf(expired)).toBe('unauthorized');
  });

  it('rotates the refresh cookie on every use; reusing a rotated one revokes the whole family', async () => {
    env = await createTestEnv();
    const first = await login(OWNER);
    const r1 = cookieOf(first)!.value;
    const second = await refresh(r1);
    expect(second.statusCode).toBe(200);
    expect(second.json().data).toMatchObject({ token_type: 'bearer', expires_in: 900 });
    const r2 = cookieOf(second)!.value;
    expect(r2).not.toBe(r1);
    const third = await refresh(r2);
    expect(third.statusCode).toBe(200);
    const live = accessOf(third);
    expect((await orgs(live)).statusCode).toBe(200);
    // r1 was rotated away: presenting it again means a copy is loose.
    const reuse = await refresh(r1);
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().error.message).toMatch(/already used/);
    expect((await orgs(live)).statusCode).toBe(401);
    expect((await orgs(accessOf(first))).statusCode).toBe(401);
    expect((await refresh(cookieOf(third)!.value)).statusCode).toBe(401);
    // Another login is a new family, untouched.
    expect((await orgs(accessOf(await login(OWNER)))).statusCode).toBe(200);
  });

  it('refuses a refresh without a cookie, with an unknown one, or one past its 30 days', async () => {
    env = await createTestEnv();
    expect((await refresh(undefined)).statusCode).toBe(401);
    expect((await refresh('svc_rt_unknown')).statusCode).toBe(401);
    const r = cookieOf(await login(OWNER))!.value;
    env.clock.advance(30 * 24 * 60 * MINUTE);
    expect((await refresh(r)).statusCode).toBe(401);
  });

  it("refuses another site's request to sign in, refresh or sign out, before reading the cookie (CSRF)", async () => {
    env = await createTestEnv();
    const r = cookieOf(await login(OWNER))!.value;
    for (const site of ['cross-site', 'same-site']) {
      for (const url of ['/v1/auth/login', '/v1/auth/refresh', '/v1/auth/logout']) {
        const res = await env.server.inject({
          method: 'POST',
          url,
          headers: { 'sec-fetch-site': site },
          cookies: { svc_refresh: r },
          ...(url.endsWith('login') ? { payload: OWNER } : {}),
        });
        expect([url, res.statusCode, codeOf(res)]).toEqual([url, 403, 'forbidden']);
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    }
    // The family is untouched: the dashboard's own page (same-origin) and other clients (none) go on.
    const same = await env.server.inject({
      method: 'POST',
      url: '/v1/auth/refresh',
      headers: { 'sec-fetch-site': 'same-origin' },
      cookies: { svc_refresh: r },
    });
    expect(same.statusCode).toBe(200);
    expect((await refresh(cookieOf(same)!.value)).statusCode).toBe(200);
  });

  it('logout revokes the family, by cookie or by access token, and clears the cookie', async () => {
    env = await createTestEnv();
    const a = await login(OWNER);
    const out = await env.server.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      cookies: { svc_refresh: cookieOf(a)!.value },
    });
    expect(out.statusCode).toBe(204);
    expect(cookieOf(out)!.value).toBe('');
    expect((await orgs(accessOf(a))).statusCode).toBe(401);
    expect((await refresh(cookieOf(a)!.value)).statusCode).toBe(401);
    const b = await login(OWNER);
    const byToken = await env.server.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: { authorization: `Bearer ${accessOf(b)}` },
    });
    expect(byToken.statusCode).toBe(204);
    expect((await orgs(accessOf(b))).statusCode).toBe(401);
  });
});

describe('tokens stay at their own door', () => {
  it('an API key on a management path and a session token on a Public API path get 401', async () => {
    env = await createTestEnv();
    const key = await env.key();
    const apiKeyOnManagement = await orgs(key);
    expect([apiKeyOnManagement.statusCode, codeOf(apiKeyOnManagement)]).toEqual([401, 'unauthorized']);
    const session = accessOf(await login(OWNER));
    const sessionOnPublic = await env.server.inject({
      method: 'GET',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${session}` },
    });
    expect([sessionOnPublic.statusCode, codeOf(sessionOnPublic)]).toEqual([401, 'unauthorized']);
    expect((await env.server.inject({ method: 'GET', url: '/v1/organizations' })).statusCode).toBe(401);
  });

  it('keeps no token in the database in the clear', async () => {
    env = await createTestEnv();
    const res = await login(OWNER);
    const stored = await env.query<{ token_hash: string }>('SELECT token_hash FROM session_tokens');
    expect(stored).toHaveLength(2);
    for (const { token_hash } of stored) {
      expect(token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect([accessOf(res), cookieOf(res)!.value]).not.toContain(token_hash);
    }
  });
});
