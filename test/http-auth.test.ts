import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { call, delta, elsewhere, email, NOTHING, runCase, snapshot, type Case } from './http-helpers.ts';

// Authentication 1–6 and the per-key request rate (decisions.md).

let env: TestEnv | undefined;

/** A trigger's definition, as its store prints it. */
async function triggerSql(e: TestEnv, name: string): Promise<string> {
  const sql =
    e.store === 'postgres'
      ? 'SELECT pg_get_triggerdef(oid) AS sql FROM pg_trigger WHERE tgname = ?'
      : 'SELECT sql FROM sqlite_master WHERE name = ?';
  return (await e.query<{ sql: string }>(sql, name))[0]!.sql;
}

async function columnsOf(e: TestEnv, table: string): Promise<string[]> {
  const sql =
    e.store === 'postgres'
      ? "SELECT column_name AS name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'public'"
      : 'SELECT name FROM pragma_table_info(?)';
  return (await e.query<{ name: string }>(sql, table)).map((c) => c.name);
}
afterEach(async () => {
  await env?.close();
  env = undefined;
});

const ENDPOINTS = [
  { name: 'POST /v1/emails', method: 'POST', url: '/v1/emails', access: 'send' },
  { name: 'POST /v1/emails/batch', method: 'POST', url: '/v1/emails/batch', access: 'send' },
  { name: 'GET /v1/emails', method: 'GET', url: '/v1/emails', access: 'read' },
  { name: 'GET /v1/emails/{id}', method: 'GET', url: '/v1/emails/:id', access: 'read' },
  { name: 'GET /v1/emails/{id}/events', method: 'GET', url: '/v1/emails/:id/events', access: 'read' },
] as const;

/** A valid request to each endpoint, for the email `id`. */
function request(e: (typeof ENDPOINTS)[number], id: string): Case {
  const url = e.url.replace(':id', id);
  const body = e.url === '/v1/emails/batch' ? { emails: [email()] } : e.method === 'POST' ? email() : undefined;
  return { name: e.name, method: e.method, url, body, status: e.method === 'POST' ? 202 : 200 };
}

async function sent(e: TestEnv): Promise<string> {
  const res = await call(e, await e.key({ env: 'TEST' }), { body: email() });
  return res.json().data.id as string;
}

describe('401 unauthorized', () => {
  const tokens: { name: string; auth: string | null }[] = [
    { name: 'no Authorization header', auth: null },
    { name: 'an empty header', auth: '' },
    { name: 'Basic scheme', auth: 'Basic YXBpa2V5OnNlY3JldA==' },
    { name: 'Bearer without a token', auth: 'Bearer' },
    { name: 'Bearer with two tokens', auth: 'Bearer svc_test_a svc_test_b' },
    { name: 'an unknown TEST key', auth: `Bearer svc_test_${randomBytes(32).toString('base64url')}` },
    { name: 'an unknown LIVE key', auth: `Bearer svc_live_${randomBytes(32).toString('base64url')}` },
    { name: 'a bare prefix', auth: 'Bearer svc_test_' },
    {
      name: 'a user session token',
      auth: 'Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlc2lnbmF0dXJl',
    },
    { name: 'a random opaque token', auth: `Bearer ${randomBytes(32).toString('hex')}` },
  ];
  describe('on every endpoint', () => {
    let shared: TestEnv;
    let id: string;
    beforeAll(async () => {
      shared = await createTestEnv();
      id = await sent(shared);
    });
    afterAll(() => shared.close());
    for (const e of ENDPOINTS) {
      it.each(tokens)(`${e.name} with $name`, async ({ auth }) => {
        await runCase(shared, null, {
          ...request(e, id),
          headers: auth === null ? {} : { authorization: auth },
          status: 401,
          code: 'unauthorized',
        });
      });
    }
  });

  it('refuses a real key whose environment prefix was changed', async () => {
    env = await createTestEnv();
    const k = await env.key({ env: 'TEST' });
    await runCase(env, k.replace('svc_test_', 'svc_live_'), {
      name: 'swap',
      body: email(),
      status: 401,
      code: 'unauthorized',
    });
  });

  it('checks the key before the body (401 for an invalid body without a key)', async () => {
    env = await createTestEnv();
    await runCase(env, null, { name: 'both', body: { to: 'x' }, status: 401, code: 'unauthorized' });
  });

  it('accepts the scheme in any case', async () => {
    env = await createTestEnv();
    const k = await env.key({ env: 'TEST' });
    await runCase(env, null, { name: 'lower', headers: { authorization: `bearer ${k}` }, body: email(), status: 202 });
  });

  it('refuses a key revoked while the server runs, on the next request', async () => {
    env = await createTestEnv();
    const k = await env.app.keys.createKey(env.init.project_id, { name: 'r', env: 'TEST' });
    await runCase(env, k.key!, { name: 'before', body: email(), status: 202, rows: { emails: 1 } });
    await runCase(env, k.key!, { name: 'read', status: 200 });
    await env.app.keys.revokeKey(k.id);
    await runCase(env, k.key!, { name: 'after', body: email(), status: 401, code: 'unauthorized' });
    await runCase(env, k.key!, { name: 'read after', status: 401, code: 'unauthorized' });
  });

  it('sees a revocation, a plan change or a deleted project made by another process at once', async () => {
    env = await createTestEnv();
    const k = await env.app.keys.createKey(env.init.project_id, { name: 'x', env: 'TEST' });
    await runCase(env, k.key!, { name: 'before', body: email(), status: 202 });
    const other = elsewhere(env);
    try {
      await other.run("UPDATE organizations SET plan = 'FREE' WHERE id = ?", env.init.organization_id);
      expect((await env.app.keys.authenticate(k.key)).plan).toBe('FREE');
      await other.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', '2026-03-15T12:00:00.000Z', k.id);
      await runCase(env, k.key!, { name: 'revoked elsewhere', body: email(), status: 401, code: 'unauthorized' });
      const k2 = await env.app.keys.createKey(env.init.project_id, { name: 'y', env: 'TEST' });
      await runCase(env, k2.key!, { name: 'another key', status: 200 });
      // A key's permission narrowed elsewhere: its next send is 403, its next read still 200
      // (a second apart: the organization is FREE now, 1 request per second).
      await other.run("UPDATE api_keys SET permissions = 'READ_ONLY' WHERE id = ?", k2.id);
      env.clock.advance(1000);
      await runCase(env, k2.key!, { name: 'narrowed elsewhere', body: email(), status: 403, code: 'forbidden' });
      env.clock.advance(1000);
      await runCase(env, k2.key!, { name: 'narrowed, read', status: 200 });
      await other.run('DELETE FROM projects WHERE id = ?', env.init.project_id);
      await runCase(env, k2.key!, { name: 'project deleted elsewhere', status: 401, code: 'unauthorized' });
    } finally {
      other.close();
    }
  });

  it('keeps found keys when only last_used_at is written, and forgets them on any other change', async () => {
    env = await createTestEnv();
    const k = await env.key({ env: 'TEST' });
    const epoch = async () => Number((await env!.query<{ n: number }>('SELECT n FROM auth_epoch'))[0]!.n);
    const before = await epoch();
    await env.query('UPDATE api_keys SET last_used_at = ?', '2026-03-15T12:00:00.000Z');
    expect(await epoch()).toBe(before);
    await env.query("UPDATE api_keys SET name = name || '-renamed' WHERE id = (SELECT min(id) FROM api_keys)");
    expect(await epoch()).toBe(before + 1);
    await runCase(env, k, { name: 'still sends', body: email(), status: 202 });
    // A column added to api_keys later must move the epoch too (SQLite migration 0015 and
    // PostgreSQL's 0001 list them).
    const listed = /UPDATE OF ([^]*?) ON (?:public\.)?api_keys/
      .exec(await triggerSql(env, 'api_keys_epoch_update'))![1]!
      .split(',')
      .map((c) => c.trim());
    expect(listed.sort()).toEqual((await columnsOf(env, 'api_keys')).filter((c) => c !== 'last_used_at').sort());
  });

  it('refuses a key from its expires_at on, and never expires a key without one', async () => {
    env = await createTestEnv();
    const expires = new Date(env.clock.now() + 3600_000).toISOString();
    const k = await env.key({ env: 'TEST', expires_at: expires });
    const forever = await env.key({ env: 'TEST' });
    env.clock.advance(3600_000 - 1);
    await runCase(env, k, { name: 'just before', body: email(), status: 202 });
    env.clock.advance(1);
    await runCase(env, k, { name: 'at expiry', body: email(), status: 401, code: 'unauthorized' });
    env.clock.advance(10 * 365 * 86400_000);
    await runCase(env, forever, { name: 'no expiry', body: email(), status: 202 });
  });
});

describe('permissions (403 forbidden; the key stays valid)', () => {
  const allowed = { FULL_ACCESS: ['send', 'read'], SENDING_ONLY: ['send'], READ_ONLY: ['read'] } as const;
  const matrix = (Object.keys(allowed) as (keyof typeof allowed)[]).flatMap((permissions) =>
    ENDPOINTS.map((e) => ({ permissions, e, ok: (allowed[permissions] as readonly string[]).includes(e.access) })),
  );
  it.each(matrix)('$permissions on $e.name → allowed: $ok', async ({ permissions, e, ok }) => {
    env = await createTestEnv();
    const id = await sent(env);
    const k = await env.key({ env: 'TEST', permissions });
    const c = request(e, id);
    await runCase(env, k, ok ? c : { ...c, status: 403, code: 'forbidden' });
  });

  it('SENDING_ONLY cannot read, and still sends afterwards', async () => {
    env = await createTestEnv();
    const k = await env.key({ env: 'TEST', permissions: 'SENDING_ONLY' });
    await runCase(env, k, { name: 'list', status: 403, code: 'forbidden' });
    await runCase(env, k, { name: 'send', body: email(), status: 202, rows: { emails: 1 } });
  });

  it('READ_ONLY cannot send (even an invalid body: 403 first), and still reads afterwards', async () => {
    env = await createTestEnv();
    const k = await env.key({ env: 'TEST', permissions: 'READ_ONLY' });
    await runCase(env, k, { name: 'send', body: email(), status: 403, code: 'forbidden' });
    await runCase(env, k, { name: 'invalid', body: { to: 1 }, status: 403, code: 'forbidden' });
    await runCase(env, k, {
      name: 'batch',
      url: '/v1/emails/batch',
      body: { emails: [email()] },
      status: 403,
      code: 'forbidden',
    });
    await runCase(env, k, { name: 'list', status: 200 });
  });
});

describe('per-key request rate', () => {
  const limited = (limit: string, remaining: string) => ({
    'x-ratelimit-limit': limit,
    'x-ratelimit-remaining': remaining,
    'x-ratelimit-reset': '1',
  });

  it('FREE: 1 request per second per key, 429 rps_exceeded with Retry-After and X-RateLimit headers', async () => {
    env = await createTestEnv({}, 'FREE');
    const k = await env.key({ env: 'TEST' });
    await runCase(env, k, {
      name: '1st',
      body: email(),
      status: 202,
      resHeaders: limited('1', '0'),
      rows: { emails: 1 },
    });
    const res = await runCase(env, k, {
      name: '2nd',
      body: email(),
      status: 429,
      code: 'rps_exceeded',
      resHeaders: { ...limited('1', '0'), 'retry-after': /^[1-9]\d*$/ },
    });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.json().error.message).toBe('More than 1 request per second');
    // Reads count too; another key has its own budget.
    await runCase(env, k, { name: 'read', status: 429, code: 'rps_exceeded' });
    await runCase(env, await env.key({ env: 'TEST' }), { name: 'other key', body: email(), status: 202 });
    env.clock.advance(999);
    await runCase(env, k, {
      name: 'same second',
      body: email(),
      status: 429,
      code: 'rps_exceeded',
      resHeaders: limited('1', '0'),
    });
    env.clock.advance(1);
    await runCase(env, k, { name: 'next second', body: email(), status: 202, resHeaders: limited('1', '0') });
  });

  it('UNLIMITED: no limit and no X-RateLimit headers', async () => {
    env = await createTestEnv();
    const k = await env.key({ env: 'TEST' });
    const none = { 'x-ratelimit-limit': null, 'x-ratelimit-remaining': null, 'x-ratelimit-reset': null };
    for (let i = 0; i < 20; i++) await runCase(env, k, { name: `${i}`, body: email(), status: 202, resHeaders: none });
    await runCase(env, k, { name: 'read', status: 200, resHeaders: none });
  });

  it('an organization override replaces the plan rate', async () => {
    env = await createTestEnv();
    await env.query('UPDATE organizations SET rate_limit_per_second = 2');
    const k = await env.key({ env: 'TEST' });
    await runCase(env, k, { name: '1', body: email(), status: 202, resHeaders: limited('2', '1') });
    await runCase(env, k, { name: '2', status: 200, resHeaders: limited('2', '0') });
    const third = await runCase(env, k, { name: '3', body: email(), status: 429, code: 'rps_exceeded' });
    expect(third.json().error.message).toBe('More than 2 requests per second');
  });
});

// POST /v1/emails takes a key kept in memory without reading the auth epoch, and confirms the
// epoch inside the accept's transaction or before any answer that writes nothing
// (src/keys/epoch.ts). Each case warms the key first, then changes it as another process would.
describe('a key kept in memory (POST /v1/emails): revocation still applies at once', () => {
  /** The key's token, warmed by one accepted send. */
  async function warmed(e: TestEnv): Promise<{ id: string; key: string }> {
    const k = await e.app.keys.createKey(e.init.project_id, { name: 'kept', env: 'TEST' });
    await runCase(e, k.key!, { name: 'warm', body: email(), status: 202 });
    return { id: k.id, key: k.key! };
  }
  const revokeElsewhere = async (e: TestEnv, id: string) => {
    const other = elsewhere(e);
    await other.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', '2026-03-15T12:00:00.000Z', id);
    other.close();
  };

  it('serves a warmed key from memory, and the accept confirms it (SQLite; PostgreSQL reads every time)', async () => {
    env = await createTestEnv();
    const k = await warmed(env);
    const spy = vi.spyOn(env.app.keys, 'authenticateKept');
    await runCase(env, k.key, { name: 'again', body: email(), status: 202, rows: { emails: 1 } });
    const { check } = await spy.mock.results[0]!.value;
    if (env.store === 'sqlite') expect(check).toMatchObject({ verified: true });
    else expect(check).toBeNull();
    // Other Public API routes read the epoch on every request.
    await runCase(env, k.key, { name: 'read', status: 200 });
    expect(spy).toHaveBeenCalledTimes(1);
  });

  // Each on a server of its own: a moved epoch, once seen, empties the memory of every key.
  it.each([
    { name: 'a body the schema refuses (422)', body: { to: 1 } },
    { name: 'a body that is not JSON (400)', body: '{"to":' },
    { name: 'a valid body', body: email() },
  ])('answers 401 to a key revoked elsewhere, with $name', async ({ body }) => {
    env = await createTestEnv();
    const k = await warmed(env);
    await revokeElsewhere(env, k.id);
    const headers = { 'content-type': 'application/json' };
    await runCase(env, k.key, { name: 'revoked', body, headers, status: 401, code: 'unauthorized' });
  });

  it('writes nothing for a key taken from memory and revoked before the write (SQLite)', async () => {
    env = await createTestEnv();
    const k = await warmed(env);
    const spy = vi.spyOn(env.app.keys, 'authenticateKept');
    const before = await snapshot(env);
    const body = new PassThrough();
    const text = JSON.stringify(email());
    const pending = env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: {
        authorization: `Bearer ${k.key}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text)),
      },
      payload: body,
    });
    // The key is authenticated from its headers; the body has not come yet.
    await vi.waitFor(() => expect(spy).toHaveBeenCalled());
    await spy.mock.results[0]!.value;
    await revokeElsewhere(env, k.id);
    body.end(text);
    const res = await pending;
    if (env.store === 'postgres') {
      // PostgreSQL read the key when the headers came, and the request is ordered before the
      // revocation, as every route's request on both stores was before keys were kept.
      expect(res.statusCode, res.body).toBe(202);
      return;
    }
    // SQLite took the key from memory: the accept's transaction finds the epoch moved.
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect(await delta(env, before)).toMatchObject(NOTHING);
  });

  it('does not replay an idempotent request to a key revoked since', async () => {
    env = await createTestEnv();
    const k = await warmed(env);
    const c = { body: email(), headers: { 'idempotency-key': 'once' } };
    await runCase(env, k.key, { name: 'first', ...c, status: 202 });
    await runCase(env, k.key, { name: 'replay', ...c, status: 200 });
    await revokeElsewhere(env, k.id);
    await runCase(env, k.key, { name: 'replay after revoke', ...c, status: 401, code: 'unauthorized' });
  });

  it('answers 401 without X-RateLimit headers to a key both over its rate and revoked elsewhere', async () => {
    env = await createTestEnv({}, 'FREE');
    const k = await warmed(env);
    await revokeElsewhere(env, k.id);
    const res = await runCase(env, k.key, { name: 'same second', body: email(), status: 401, code: 'unauthorized' });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('answers 403 to a key narrowed elsewhere, counting its rate once', async () => {
    env = await createTestEnv({}, 'FREE');
    const k = await warmed(env);
    const other = elsewhere(env);
    await other.run("UPDATE api_keys SET permissions = 'READ_ONLY' WHERE id = ?", k.id);
    other.close();
    env.clock.advance(1000);
    await runCase(env, k.key, { name: 'narrowed', body: email(), status: 403, code: 'forbidden' });
  });
});
