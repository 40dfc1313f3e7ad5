import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';

// Members and invitations over the Management API: roles change, members leave, the last
// OWNER stays, and an invitation makes a member (of an existing account, or a new one).

let env: TestEnv;
afterEach(() => env.close());

type Res = LightMyRequestResponse;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

async function login(email: string, password: string): Promise<string> {
  const res = await env.server.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  return res.json<{ data: { access_token: string } }>().data.access_token;
}

async function setup(): Promise<void> {
  env = await createTestEnv();
  tokens.OWNER = await login('owner@example.com', 'owner-password-1');
  ids.OWNER = (await env.app.accounts.getUserByEmail('owner@example.com')).id;
  for (const role of ['ADMIN', 'DEVELOPER'] as const) {
    const email = `${role.toLowerCase()}@example.com`;
    ids[role] = (await env.app.accounts.createUser({ email, password: 'member-password-1' })).id;
    await env.app.accounts.addMember(env.init.organization_id, { email, role });
    tokens[role] = await login(email, 'member-password-1');
  }
}

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who?: string, payload?: object): Promise<Res> =>
  env.server.inject({
    method,
    url,
    headers: who ? { authorization: `Bearer ${tokens[who]}` } : {},
    ...(payload ? { payload } : {}),
  });
const M = (who: string) => `/v1/organizations/${env.init.organization_id}/members/${ids[who]}`;
const codeOf = (r: Res) => r.json<{ error: { code: string } }>().error.code;
const roles = async () =>
  Object.fromEntries(
    (await env.app.accounts.listMembers(env.init.organization_id)).map((m) => [m.email.split('@')[0], m.role]),
  );

describe('members', () => {
  it('an ADMIN changes roles below OWNER; only an OWNER grants or takes OWNER', async () => {
    await setup();
    expect((await call('PATCH', M('DEVELOPER'), 'DEVELOPER', { role: 'VIEWER' })).statusCode).toBe(403);
    const res = await call('PATCH', M('DEVELOPER'), 'ADMIN', { role: 'VIEWER' });
    expect([res.statusCode, res.json().data.role]).toEqual([200, 'VIEWER']);
    expect(codeOf(await call('PATCH', M('DEVELOPER'), 'ADMIN', { role: 'OWNER' }))).toBe('forbidden');
    expect(codeOf(await call('PATCH', M('OWNER'), 'ADMIN', { role: 'VIEWER' }))).toBe('forbidden');
    expect((await call('PATCH', M('ADMIN'), 'OWNER', { role: 'OWNER' })).statusCode).toBe(200);
    expect(await roles()).toEqual({ owner: 'OWNER', admin: 'OWNER', developer: 'VIEWER' });
    const bad = await call('PATCH', M('ADMIN'), 'OWNER', { role: 'KING' });
    expect([bad.statusCode, codeOf(bad)]).toEqual([422, 'request_validation_failed']);
  });

  it('keeps the last OWNER: neither demoted nor removed (409)', async () => {
    await setup();
    const demote = await call('PATCH', M('OWNER'), 'OWNER', { role: 'ADMIN' });
    expect([demote.statusCode, codeOf(demote)]).toEqual([409, 'conflict']);
    expect((await call('DELETE', M('OWNER'), 'OWNER')).statusCode).toBe(409);
    await call('PATCH', M('ADMIN'), 'OWNER', { role: 'OWNER' });
    expect((await call('PATCH', M('OWNER'), 'ADMIN', { role: 'ADMIN' })).statusCode).toBe(200);
    expect(await roles()).toMatchObject({ owner: 'ADMIN', admin: 'OWNER' });
  });

  it('an ADMIN removes a member, who loses access at once; removal is audited', async () => {
    await setup();
    expect((await call('DELETE', M('ADMIN'), 'DEVELOPER')).statusCode).toBe(403);
    expect((await call('DELETE', M('DEVELOPER'), 'ADMIN')).statusCode).toBe(204);
    expect((await call('GET', `/v1/organizations/${env.init.organization_id}`, 'DEVELOPER')).statusCode).toBe(404);
    expect((await call('DELETE', M('DEVELOPER'), 'ADMIN')).statusCode).toBe(404);
    const row = (
      await env.query<{ action: string; before: string; after: string | null }>(
        `SELECT action, before, after FROM audit_logs ORDER BY ${env.auditOrder} DESC LIMIT 1`,
      )
    )[0]!;
    expect(row.action).toBe('member.remove');
    expect(JSON.parse(row.before)).toMatchObject({ email: 'developer@example.com', role: 'DEVELOPER' });
    expect(row.after).toBeNull();
  });
});

describe('invitations', () => {
  const invite = (who: string, body: object) =>
    call('POST', `/v1/organizations/${env.init.organization_id}/invitations`, who, body);
  const accept = (token: string, who?: string, body?: object) =>
    call('POST', `/v1/invitations/${token}/accept`, who, body);

  it('an ADMIN invites; the invitee signs up with a password and joins with the role', async () => {
    await setup();
    expect((await invite('DEVELOPER', { email: 'new@example.com', role: 'VIEWER' })).statusCode).toBe(403);
    const res = await invite('ADMIN', { email: 'new@example.com', role: 'DEVELOPER' });
    expect(res.statusCode).toBe(201);
    const inv = res.json().data as { token: string; expires_at: string; email: string };
    expect(inv).toMatchObject({ email: 'new@example.com', role: 'DEVELOPER', expires_at: '2026-03-22T12:00:00.000Z' });
    expect(inv.token).toMatch(/^svc_inv_/);
    expect(JSON.stringify(await env.query('SELECT * FROM invitations'))).not.toContain(inv.token);
    const short = await accept(inv.token, undefined, { password: 'short' });
    expect([short.statusCode, codeOf(short)]).toEqual([422, 'request_validation_failed']);
    const joined = await accept(inv.token, undefined, { password: 'new-password-1' });
    expect([joined.statusCode, joined.json().data.role]).toEqual([201, 'DEVELOPER']);
    tokens.NEW = await login('new@example.com', 'new-password-1');
    expect((await call('GET', `/v1/organizations/${env.init.organization_id}`, 'NEW')).json().data.role).toBe(
      'DEVELOPER',
    );
    const again = await accept(inv.token, 'NEW');
    expect([again.statusCode, codeOf(again)]).toEqual([409, 'conflict']);
  });

  it('a signed-in user accepts an invitation to its own address only', async () => {
    await setup();
    await env.app.accounts.createUser({ email: 'guest@example.com', password: 'guest-password-1' });
    tokens.GUEST = await login('guest@example.com', 'guest-password-1');
    const inv = (await invite('ADMIN', { email: 'guest@example.com', role: 'VIEWER' })).json().data;
    expect(codeOf(await accept(inv.token, 'DEVELOPER'))).toBe('forbidden');
    // The address has an account: accepting needs its session, not a new password.
    expect(codeOf(await accept(inv.token, undefined, { password: 'another-password' }))).toBe('conflict');
    expect((await accept(inv.token, 'GUEST')).statusCode).toBe(201);
    expect((await roles()).guest).toBe('VIEWER');
  });

  it('pending invitations: any member lists them (no token); an ADMIN revokes one, and its link stops working', async () => {
    await setup();
    const I = `/v1/organizations/${env.init.organization_id}/invitations`;
    const first = (await invite('ADMIN', { email: 'first@example.com', role: 'VIEWER' })).json().data;
    env.clock.advance(1000);
    await invite('ADMIN', { email: 'second@example.com', role: 'ADMIN' });
    const listed = await call('GET', I, 'DEVELOPER');
    expect(listed.statusCode).toBe(200);
    const pending = listed.json().data as { id: string; email: string }[];
    expect(pending.map((i) => i.email)).toEqual(['first@example.com', 'second@example.com']);
    expect(JSON.stringify(pending)).not.toContain('svc_inv_');
    expect(pending[0]).not.toHaveProperty('token_hash');
    expect(codeOf(await call('DELETE', `${I}/${first.id}`, 'DEVELOPER'))).toBe('forbidden');
    env.clock.advance(1000);
    expect((await call('DELETE', `${I}/${first.id}`, 'ADMIN')).statusCode).toBe(204);
    expect((await call('GET', I, 'ADMIN')).json().data.map((i: { email: string }) => i.email)).toEqual([
      'second@example.com',
    ]);
    expect(codeOf(await accept(first.token, undefined, { password: 'first-password-1' }))).toBe('not_found');
    const again = await call('DELETE', `${I}/${first.id}`, 'ADMIN');
    expect([again.statusCode, codeOf(again)]).toEqual([404, 'not_found']);
    expect(codeOf(await call('DELETE', `${I}/not-an-id`, 'ADMIN'))).toBe('not_found');
    const audit = await env.query<{ action: string }>(
      "SELECT action FROM audit_logs WHERE target_type = 'invitation' ORDER BY id",
    );
    expect(audit.map((r) => r.action)).toEqual(['invitation.create', 'invitation.create', 'invitation.revoke']);
    env.clock.advance(7 * 24 * 3_600_000);
    tokens.ADMIN = await login('admin@example.com', 'member-password-1');
    expect((await call('GET', I, 'ADMIN')).json().data).toEqual([]);
  });

  it('only an OWNER invites an OWNER; an unknown or expired token is 404', async () => {
    await setup();
    expect(codeOf(await invite('ADMIN', { email: 'boss@example.com', role: 'OWNER' }))).toBe('forbidden');
    const inv = (await invite('OWNER', { email: 'boss@example.com', role: 'OWNER' })).json().data;
    expect((await accept('svc_inv_nonsense', undefined, { password: 'boss-password-1' })).statusCode).toBe(404);
    env.clock.advance(7 * 24 * 3_600_000);
    expect((await accept(inv.token, undefined, { password: 'boss-password-1' })).statusCode).toBe(404);
  });
});
