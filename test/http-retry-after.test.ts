import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { addrs, call, email, type Res } from './http-helpers.ts';
import { caller, codeOf, signInMembers } from './management-helpers.ts';
import { AppError, errorRegistry, type ErrorCode } from '../src/errors.ts';
import { sendError } from '../src/http/envelope.ts';

// Issue 26, item 9: every 429 carries Retry-After (whole seconds, at least 1), whichever
// rule refused the request. One case per place a 429 is made, and the registry's 429 codes
// are exactly the ones these cases cover, so a new one cannot come without its case.

let env: TestEnv;
afterEach(async () => {
  const open = env as TestEnv | undefined;
  env = undefined as unknown as TestEnv;
  await open?.close();
});

const CODES_429 = Object.entries(errorRegistry)
  .filter(([, spec]) => spec.status === 429)
  .map(([code]) => code)
  .sort();

/** A 429 with the given code and a Retry-After of whole seconds, at least 1. */
function expectRetryAfter(res: Res, code: string): number {
  expect([res.statusCode, codeOf(res)], res.body).toEqual([429, code]);
  const header = String(res.headers['retry-after']);
  expect(header).toMatch(/^[1-9]\d*$/);
  return Number(header);
}

const PATHS: { name: string; code: ErrorCode; run(): Promise<Res> }[] = [
  {
    name: "a key over its plan's requests per second",
    code: 'rps_exceeded',
    async run() {
      env = await createTestEnv({}, 'FREE');
      const key = await env.key({ env: 'TEST' });
      expect((await call(env, key, { body: email() })).statusCode).toBe(202);
      return call(env, key, { body: email() });
    },
  },
  {
    name: 'a LIVE send past the monthly volume',
    code: 'monthly_volume_exceeded',
    async run() {
      env = await createTestEnv({}, 'FREE');
      await verifyDomain(env, 'example.com');
      const month = new Date(env.clock.now()).toISOString().slice(0, 7);
      await env.query(
        'INSERT INTO usage_counters (organization_id, period, count) VALUES (?, ?, 100)',
        env.init.organization_id,
        month,
      );
      return call(env, await env.key({ env: 'LIVE' }), { body: email({ from: 'a@example.com' }) });
    },
  },
  {
    name: "a LIVE send past the organization's daily limit",
    code: 'daily_limit_exceeded',
    async run() {
      env = await createTestEnv();
      await verifyDomain(env, 'example.com');
      await env.query('UPDATE organizations SET daily_limit = 1 WHERE id = ?', env.init.organization_id);
      return call(env, await env.key({ env: 'LIVE' }), { body: email({ from: 'a@example.com', to: addrs(2) }) });
    },
  },
  {
    name: 'failed logins',
    code: 'rate_limited',
    async run() {
      env = await createTestEnv();
      const login = () =>
        env.server.inject({
          method: 'POST',
          url: '/v1/auth/login',
          payload: { email: 'owner@example.com', password: 'not-the-password' },
        });
      for (let i = 0; i < 100; i++) {
        const res = await login();
        if (res.statusCode !== 401) return res;
      }
      throw new Error('no 429 after 100 failed logins');
    },
  },
  {
    name: 'manual webhook redelivery, 10 a minute per webhook',
    code: 'rate_limited',
    async run() {
      env = await createTestEnv();
      const tokens = await signInMembers(env, ['DEVELOPER']);
      const as = caller(() => env, tokens);
      const W = `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}/webhooks`;
      const hook = (await as('POST', W, 'DEVELOPER', { url: 'https://example.com/h', events: ['*'] })).json<{
        data: { id: string };
      }>().data;
      // A recorded attempt to redeliver, as the dispatcher writes one.
      const deliveryId = '0192f4c2-1a2b-7c3d-8e4f-5a6b7c8d9e0f';
      await env.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, http_status,
           duration_ms, error, request_body, response_body, created_at, next_attempt_at)
         VALUES (?, ?, ?, 'delivered', 1, 'failed', 500, 12, 'HTTP 500', '{}', '', ?, NULL)`,
        deliveryId,
        hook.id,
        '0192f4c2-0000-7000-8000-000000000001',
        new Date(env.clock.now()).toISOString(),
      );
      const redeliver = () => as('POST', `${W}/${hook.id}/deliveries/${deliveryId}/redeliver`, 'DEVELOPER');
      for (let i = 0; i < 10; i++) expect((await redeliver()).statusCode).toBe(202);
      env.clock.advance(20_000);
      return redeliver();
    },
  },
];

describe('Retry-After on every 429', () => {
  it('the registry has no 429 code that a case below does not produce', () => {
    expect([...new Set(PATHS.map((p) => p.code))].sort()).toEqual(CODES_429);
  });

  for (const path of PATHS) {
    it(`${path.name}: 429 ${path.code} with Retry-After`, async () => {
      expectRetryAfter(await path.run(), path.code);
    });
  }

  it('the redelivery wait is what is left of the minute', async () => {
    const path = PATHS.find((p) => p.name.startsWith('manual webhook'))!;
    expect(expectRetryAfter(await path.run(), 'rate_limited')).toBe(40);
  });

  it('the one place that writes error responses gives a 429 without a known wait Retry-After: 1', async () => {
    const server = Fastify();
    server.setErrorHandler((err, req, reply) => sendError(req, reply, err));
    server.get('/:code', (req) => {
      throw new AppError((req.params as { code: ErrorCode }).code);
    });
    for (const code of CODES_429) {
      const res = await server.inject({ method: 'GET', url: `/${code}` });
      expect([code, res.statusCode, res.headers['retry-after']]).toEqual([code, 429, '1']);
    }
    // Other statuses say nothing of retrying.
    const notFound = await server.inject({ method: 'GET', url: '/not_found' });
    expect([notFound.statusCode, notFound.headers['retry-after']]).toEqual([404, undefined]);
    await server.close();
  });
});
