import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRole, MIN_ROLE, type Role } from '../src/accounts/index.ts';
import { createTestEnv, type TestEnv } from './harness.ts';

// The Management API's access rules (contract, "Authentication" 7-8): every organization
// route, for each of the four roles and for a user of another organization.

let env: TestEnv;
const PASSWORD = 'member-password-1';
const tokens = {} as Record<Role | 'OUTSIDER', string>;
let other = { org: '', project: '' };
let fixtures = { template: '', domain: '', email: '', webhook: '', delivery: '', route: '', received: '' };

async function loginAs(email: string, password = PASSWORD): Promise<string> {
  const res = await env.server.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  expect(res.statusCode).toBe(200);
  return res.json<{ data: { access_token: string } }>().data.access_token;
}

const get = (url: string, token: string) =>
  env.server.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  env = await createTestEnv();
  const { accounts } = env.app;
  for (const role of ['ADMIN', 'DEVELOPER', 'VIEWER'] as const) {
    const email = `${role.toLowerCase()}@example.com`;
    await accounts.createUser({ email, password: PASSWORD });
    await accounts.addMember(env.init.organization_id, { email, role });
    tokens[role] = await loginAs(email);
  }
  tokens.OWNER = await loginAs('owner@example.com', 'owner-password-1');
  await accounts.createUser({ email: 'outsider@example.com', password: PASSWORD });
  const org = await accounts.createOrg({ name: 'Other', owner_email: 'outsider@example.com' });
  other = { org: org.id, project: (await accounts.createProject(org.id, { name: 'Theirs' })).id };
  tokens.OUTSIDER = await loginAs('outsider@example.com');
  const t = await env.app.templates.create(env.init.project_id, {
    name: 'Welcome',
    slug: 'welcome',
    subject_template: 'Hi',
    text_template: 'Hello',
  });
  const d = await env.app.domains.addDomain({
    name: 'example.com',
    organization: 'Acme',
    project: env.init.project_id,
    receiving: true,
  });
  // A route that holds what it takes, and a message it took with one attachment (index 0).
  const route = await env.app.receiving.createRoute(env.init.project_id, { pattern: '*@example.com', action: 'hold' });
  const message = new MailComposer({
    from: 'a@example.net',
    to: 'desk@example.com',
    subject: 'Hi',
    text: 'Hello',
    attachments: [{ filename: 'a.txt', content: 'a' }],
  });
  const [held] = await env.app.receiving.receive(await message.compile().build(), {
    mailFrom: 'a@example.net',
    rcptTo: ['desk@example.com'],
    remoteIp: '127.0.0.1',
    helo: 'example.net',
  });

  const sent = await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${await env.key()}` },
    payload: {
      from: 'a@example.com',
      to: ['b@example.net'],
      subject: 'Hi',
      text: 'Hello',
      // Read by the attachment download's route (position 0).
      attachments: [{ filename: 'a.txt', content_base64: Buffer.from('a').toString('base64') }],
    },
  });
  // A webhook with one (skipped) delivery record: it was inactive when the event came.
  const hook = await env.app.webhooks.create(env.init.project_id, { url: 'https://hooks.example.com/', events: ['*'] });
  await env.app.webhooks.update(env.init.project_id, hook.id, { is_active: false });
  await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${await env.key()}` },
    payload: { from: 'a@example.com', to: ['c@example.net'], subject: 'Hi', text: 'Hello' },
  });
  await env.app.webhookDispatcher().runOnce();
  const [skipped] = await env.app.webhooks.deliveries(env.init.project_id, hook.id, {});
  fixtures = {
    template: t.id,
    domain: d.id,
    email: sent.json<{ data: { id: string } }>().data.id,
    webhook: hook.id,
    delivery: skipped!.id,
    route: route.id,
    received: held!.id,
  };
}, 60_000);
afterAll(() => env.close());

/** Every organization route built so far: its pattern in the role table and a URL of Acme's. */
function routes(): [string, string][] {
  const O = `/v1/organizations/${env.init.organization_id}`;
  const P = `${O}/projects/${env.init.project_id}`;
  const ORG = '/v1/organizations/:organization_id';
  const PROJECT = `${ORG}/projects/:project_id`;
  return [
    [`GET ${ORG}`, O],
    [`GET ${ORG}/projects`, `${O}/projects`],
    [`GET ${PROJECT}`, P],
    [`GET ${ORG}/members`, `${O}/members`],
    [`GET ${ORG}/domains`, `${O}/domains`],
    [`GET ${ORG}/domains/:domain_id`, `${O}/domains/${fixtures.domain}`],
    [`GET ${PROJECT}/api-keys`, `${P}/api-keys`],
    [`GET ${PROJECT}/templates`, `${P}/templates`],
    [`GET ${PROJECT}/templates/:template_id`, `${P}/templates/${fixtures.template}`],
    [`GET ${PROJECT}/templates/:template_id/versions`, `${P}/templates/${fixtures.template}/versions`],
    [`GET ${PROJECT}/templates/:template_id/versions/:version`, `${P}/templates/${fixtures.template}/versions/1`],
    [`GET ${PROJECT}/suppressions`, `${P}/suppressions`],
    [`GET ${ORG}/audit-logs`, `${O}/audit-logs`],
  ];
}

describe('the role matrix', () => {
  it('covers every route with a role in the table', () => {
    for (const [pattern] of routes()) expect(MIN_ROLE[pattern]).toBeDefined();
  });

  it.each(['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'] as const)(
    '%s gets 200 where its role suffices and 403 forbidden elsewhere',
    async (role) => {
      for (const [pattern, url] of routes()) {
        const res = await get(url, tokens[role]);
        const allowed = hasRole(role, MIN_ROLE[pattern]!);
        expect([pattern, res.statusCode]).toEqual([pattern, allowed ? 200 : 403]);
        if (!allowed) expect(res.json().error.code).toBe('forbidden');
      }
    },
  );

  it("gives a user of another organization 404 on every one of Acme's routes (no existence oracle)", async () => {
    for (const [pattern, url] of routes()) {
      const res = await get(url, tokens.OUTSIDER);
      expect([pattern, res.statusCode, res.json().error.code]).toEqual([pattern, 404, 'not_found']);
    }
  });

  it("gives 404 for a project of another organization under one's own", async () => {
    const mine = await get(`/v1/organizations/${other.org}/projects/${env.init.project_id}/templates`, tokens.OUTSIDER);
    expect(mine.statusCode).toBe(404);
    const theirs = await get(`/v1/organizations/${env.init.organization_id}/projects/${other.project}`, tokens.OWNER);
    expect(theirs.statusCode).toBe(404);
    const domainOfAcme = await get(`/v1/organizations/${other.org}/domains/${fixtures.domain}`, tokens.OUTSIDER);
    expect(domainOfAcme.statusCode).toBe(404);
  });
});

/** A URL of Acme's for a route pattern: fixture ids for reads, unknown ids for writes to a sub-resource. */
function urlOf(pattern: string): string {
  const [method, path] = pattern.split(' ') as [string, string];
  const unknown = '01900000-0000-7000-8000-000000000000';
  const sub = (id: string) => (method === 'GET' ? id : unknown);
  return path
    .replace(':organization_id', env.init.organization_id)
    .replace(':project_id', env.init.project_id)
    .replace(':domain_id', sub(fixtures.domain))
    .replace(':template_id', sub(fixtures.template))
    .replace(':email_id', sub(fixtures.email))
    .replace(':user_id', unknown)
    .replace(':key_id', unknown)
    .replace(':webhook_id', sub(fixtures.webhook))
    .replace(':delivery_id', sub(fixtures.delivery))
    .replace(':route_id', sub(fixtures.route))
    .replace(':received_id', sub(fixtures.received))
    .replace(':version', '1')
    .replace(':index', '0')
    .replace(':position', '0')
    .replace(':email', 'nobody@example.net');
}

describe('the role matrix, every method', () => {
  // Writes the test does not carry out where they are allowed (they would remove the fixtures).
  const destructive = new Set([
    'DELETE /v1/organizations/:organization_id',
    'DELETE /v1/organizations/:organization_id/projects/:project_id',
  ]);
  const patterns = Object.keys(MIN_ROLE);

  it.each(['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'] as const)(
    '%s: 403 forbidden below the least role (nothing done); past the role check above it',
    async (role) => {
      for (const pattern of patterns) {
        const allowed = hasRole(role, MIN_ROLE[pattern]!);
        if (allowed && destructive.has(pattern)) continue;
        const method = pattern.split(' ')[0] as 'GET' | 'POST' | 'PATCH' | 'DELETE';
        const res = await env.server.inject({
          method,
          url: urlOf(pattern),
          headers: { authorization: `Bearer ${tokens[role]}` },
          ...(method === 'POST' || method === 'PATCH' ? { payload: {} } : {}),
        });
        // A file (an attachment's download) is not JSON; every other answer but a 204 is.
        const json = String(res.headers['content-type'] ?? '').startsWith('application/json');
        const code = json ? (res.json<{ error?: { code: string } }>().error?.code ?? null) : null;
        if (!allowed) expect([pattern, res.statusCode, code]).toEqual([pattern, 403, 'forbidden']);
        else if (method === 'GET') expect([pattern, res.statusCode]).toEqual([pattern, 200]);
        else expect([pattern, code]).not.toEqual([pattern, 'forbidden']);
      }
    },
  );

  it('an outsider gets 404 on every method of every route of Acme', async () => {
    for (const pattern of patterns) {
      const method = pattern.split(' ')[0] as 'GET' | 'POST' | 'PATCH' | 'DELETE';
      const res = await env.server.inject({
        method,
        url: urlOf(pattern),
        headers: { authorization: `Bearer ${tokens.OUTSIDER}` },
        ...(method === 'POST' || method === 'PATCH' ? { payload: {} } : {}),
      });
      expect([pattern, res.statusCode]).toEqual([pattern, 404]);
    }
  });
});

describe('the organization routes answer', () => {
  it('the organization with the caller role, its projects, members, domains, templates and keys', async () => {
    const O = `/v1/organizations/${env.init.organization_id}`;
    const P = `${O}/projects/${env.init.project_id}`;
    expect((await get(O, tokens.VIEWER)).json().data).toMatchObject({ name: 'Acme', role: 'VIEWER' });
    expect((await get(`${O}/projects`, tokens.VIEWER)).json().data.map((p: { name: string }) => p.name)).toEqual([
      'Web',
    ]);
    const members = (await get(`${O}/members`, tokens.VIEWER)).json().data as { email: string; role: string }[];
    expect(members.map((m) => [m.email, m.role]).sort()).toEqual([
      ['admin@example.com', 'ADMIN'],
      ['developer@example.com', 'DEVELOPER'],
      ['owner@example.com', 'OWNER'],
      ['viewer@example.com', 'VIEWER'],
    ]);
    expect((await get(`${O}/domains`, tokens.VIEWER)).json().data[0]).toMatchObject({ name: 'example.com' });
    expect((await get(`${P}/templates/welcome`, tokens.VIEWER)).json().data).toMatchObject({ slug: 'welcome' });
    const keys = (await get(`${P}/api-keys`, tokens.DEVELOPER)).json().data as object[];
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => !('key' in k) && !('key_hash' in k))).toBe(true);
  });

  it('refuses a bad query with 422 and an unknown id with 404', async () => {
    const P = `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}`;
    const bad = await get(`${P}/api-keys?include_revoked=maybe`, tokens.OWNER);
    expect([bad.statusCode, bad.json().error.code]).toEqual([422, 'request_validation_failed']);
    const limit = await get(`${P}/suppressions?limit=0`, tokens.OWNER);
    expect(limit.statusCode).toBe(422);
    expect((await get(`${P}/templates/no-such-template`, tokens.OWNER)).statusCode).toBe(404);
    expect((await get('/v1/organizations/not-a-uuid', tokens.OWNER)).statusCode).toBe(404);
  });
});

const send = (method: 'POST' | 'DELETE', url: string, token: string, payload?: object) =>
  env.server.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

describe('API keys over HTTP, with their audit rows', () => {
  const keysUrl = () => `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}/api-keys`;
  const auditOf = async () =>
    (await get(`/v1/organizations/${env.init.organization_id}/audit-logs`, tokens.ADMIN)).json().data as {
      action: string;
      actor: { type: string; id: string | null; name: string | null; ip: string | null };
      target_id: string;
      before: Record<string, unknown> | null;
      after: Record<string, unknown> | null;
    }[];

  it('lets a DEVELOPER create a key (201, shown once) and revoke it (204); a running server refuses it next', async () => {
    expect((await send('POST', keysUrl(), tokens.VIEWER, { name: 'ci' })).statusCode).toBe(403);
    const created = await send('POST', keysUrl(), tokens.DEVELOPER, { name: 'ci', env: 'TEST' });
    expect(created.statusCode).toBe(201);
    const key = created.json().data as { id: string; key: string; name: string; env: string };
    expect(key).toMatchObject({ name: 'ci', env: 'TEST', key: expect.stringMatching(/^svc_test_/) });
    const publicGet = () =>
      env.server.inject({ method: 'GET', url: '/v1/emails', headers: { authorization: `Bearer ${key.key}` } });
    expect((await publicGet()).statusCode).toBe(200);
    expect((await send('DELETE', `${keysUrl()}/${key.id}`, tokens.VIEWER)).statusCode).toBe(403);
    expect((await send('DELETE', `${keysUrl()}/${key.id}`, tokens.OUTSIDER)).statusCode).toBe(404);
    const revoked = await send('DELETE', `${keysUrl()}/${key.id}`, tokens.DEVELOPER);
    expect([revoked.statusCode, revoked.body]).toEqual([204, '']);
    expect((await publicGet()).statusCode).toBe(401);

    const [revoke, create] = await auditOf();
    expect(create).toMatchObject({
      action: 'api_key.create',
      target_id: key.id,
      actor: { type: 'user', name: 'developer@example.com', ip: '127.0.0.1' },
      before: null,
      after: { name: 'ci', revoked_at: null },
    });
    expect(create!.after).not.toHaveProperty('key');
    expect(create!.after).not.toHaveProperty('key_hash');
    expect(revoke).toMatchObject({
      action: 'api_key.revoke',
      before: { revoked_at: null },
      after: { revoked_at: expect.any(String) },
    });
  });

  it('audits the CLI too, as the OS user at the server', async () => {
    const k = await env.app.keys.createKey(env.init.project_id, { name: 'from-cli', env: 'TEST' });
    const [row] = await auditOf();
    expect(row).toMatchObject({
      action: 'api_key.create',
      target_id: k.id,
      actor: { type: 'cli', id: null, ip: null },
    });
    expect(row!.actor.name).toEqual(expect.any(String));
    const O = `/v1/organizations/${env.init.organization_id}`;
    const all = (await get(`${O}/audit-logs`, tokens.ADMIN)).json().data as { id: string }[];
    const first = (await get(`${O}/audit-logs?limit=1`, tokens.ADMIN)).json().data as { id: string }[];
    const next = (await get(`${O}/audit-logs?limit=1&before=${first[0]!.id}`, tokens.ADMIN)).json().data;
    expect([...first, ...next].map((r: { id: string }) => r.id)).toEqual(all.slice(0, 2).map((r) => r.id));
  });

  it('refuses bad input with the envelope and writes no audit row for a write that failed', async () => {
    const before = (await auditOf()).length;
    const bad = await send('POST', keysUrl(), tokens.DEVELOPER, { name: '', env: 'STAGING' });
    expect([bad.statusCode, bad.json().error.code]).toEqual([422, 'request_validation_failed']);
    expect((await send('POST', keysUrl(), tokens.DEVELOPER, { name: 'dup' })).statusCode).toBe(201);
    const dup = await send('POST', keysUrl(), tokens.DEVELOPER, { name: 'dup' });
    expect([dup.statusCode, dup.json().error.code]).toEqual([409, 'conflict']);
    const unknown = await send('DELETE', `${keysUrl()}/0195f0a0-0000-7000-8000-000000000000`, tokens.DEVELOPER);
    expect(unknown.statusCode).toBe(404);
    expect((await auditOf()).length).toBe(before + 1);
  });

  it("does not revoke another project's key through this project's path", async () => {
    const theirs = await env.app.keys.createKey(other.project, { name: 'theirs', env: 'TEST' });
    const res = await send('DELETE', `${keysUrl()}/${theirs.id}`, tokens.OWNER);
    expect(res.statusCode).toBe(404);
    expect((await env.app.keys.listKeys(other.project)).map((k) => k.revoked_at)).toEqual([null]);
  });
});
