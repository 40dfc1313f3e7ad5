import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_ROLE } from '../src/accounts/roles.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { call, email, expectEnvelope, runCase, type Case } from './http-helpers.ts';

// The envelope of every response (decisions.md, "Envelope"), the protocol
// errors, and the operational endpoints.

let env: TestEnv;
let key: string;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MiB = 1024 * 1024;

beforeAll(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
});
afterAll(() => env.close());

describe('X-Request-ID', () => {
  const cases: Case[] = [
    { name: 'a 202 send', body: email(), status: 202, rows: { emails: 1 } },
    { name: 'a 200 list', status: 200 },
    { name: 'a 401', key: null, status: 401, code: 'unauthorized' },
    { name: 'a 404 path', url: '/nope', status: 404, code: 'not_found' },
    { name: 'a 405', method: 'DELETE', status: 405, code: 'method_not_allowed' },
    {
      name: 'a 400',
      method: 'POST',
      body: '{"from":',
      headers: { 'content-type': 'application/json' },
      status: 400,
      code: 'invalid_json',
    },
    { name: 'a 422', body: {}, status: 422, code: 'request_validation_failed' },
    { name: '/healthz', url: '/healthz', key: null, status: 200 },
    { name: '/readyz', url: '/readyz', key: null, status: 200 },
    { name: '/v1/openapi.json', url: '/v1/openapi.json', key: null, status: 200, raw: true },
  ];
  it.each(cases)('is on $name, and error bodies carry it twice', async (c) => {
    const res = await runCase(env, key, c);
    expect(res.headers['x-request-id']).toMatch(UUID_RE);
  });

  it.each([
    { name: 'a short id', id: 'req-abc_123' },
    { name: '128 visible ASCII characters', id: '!~'.repeat(64) },
    {
      name: 'every visible ASCII character',
      id: Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)).join(''),
    },
  ])('echoes a client id: $name', async ({ id }) => {
    const ok = await runCase(env, key, { name: 'ok', headers: { 'x-request-id': id }, status: 200 });
    expect(ok.headers['x-request-id']).toBe(id);
    const err = await runCase(env, null, {
      name: 'err',
      headers: { 'x-request-id': id },
      status: 401,
      code: 'unauthorized',
    });
    expect(err.headers['x-request-id']).toBe(id);
    expect(err.json().request_id).toBe(id);
  });

  it.each([
    { name: '129 characters', id: 'a'.repeat(129) },
    { name: 'a space', id: 'has space' },
    { name: 'a tab', id: 'a\tb' },
    { name: 'empty', id: '' },
    { name: 'non-ASCII', id: 'caf\u00e9' },
  ])('replaces an invalid client id: $name', async ({ id }) => {
    const res = await runCase(env, null, {
      name: 'bad',
      headers: { 'x-request-id': id },
      status: 401,
      code: 'unauthorized',
    });
    expect(res.headers['x-request-id']).toMatch(UUID_RE);
    expect(res.json().request_id).toBe(res.headers['x-request-id']);
  });

  it('gives every request its own id', async () => {
    const a = await call(env, key, {});
    const b = await call(env, key, {});
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describe('protocol errors', () => {
  const json = { 'content-type': 'application/json' };
  const cases: Case[] = [
    { name: 'truncated JSON', body: '{"from": "a@example.com"', headers: json, status: 400, code: 'invalid_json' },
    { name: 'not JSON at all', body: 'hello', headers: json, status: 400, code: 'invalid_json' },
    { name: 'an empty JSON body', body: '', headers: json, status: 400, code: 'invalid_json' },
    {
      name: 'a form-encoded body',
      body: 'from=a@example.com',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'malformed JSON on the batch',
      url: '/v1/emails/batch',
      body: '{"emails": [',
      headers: json,
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'a header named __proto__ (it would vanish in parsing: refused, not dropped)',
      body: JSON.stringify(email()).replace('{', '{"headers":{"__proto__":"x"},'),
      headers: json,
      status: 400,
      code: 'invalid_json',
      check: (res) => expect(res.json().error.message).toMatch(/"__proto__" key/),
    },
    {
      name: 'a __proto__ key at the top level',
      body: JSON.stringify(email()).replace('{', '{"__proto__":{"subject":"x"},'),
      headers: json,
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'a __proto__ key inside a batch item',
      url: '/v1/emails/batch',
      body: JSON.stringify({ emails: [email()] }).replace('"from"', '"__proto__":{},"from"'),
      headers: json,
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'a header named constructor is an ordinary header',
      body: JSON.stringify(email({ headers: { constructor: 'x' } })),
      headers: json,
      status: 202,
      rows: { emails: 1 },
      check: async (_res, env) =>
        expect(
          (await env.query<{ headers: string }>('SELECT headers FROM emails ORDER BY seq DESC LIMIT 1'))[0],
        ).toEqual({
          headers: '{"constructor":"x"}',
        }),
    },
    {
      name: 'JSON sent as text/plain is parsed as JSON',
      body: JSON.stringify(email()),
      headers: { 'content-type': 'text/plain' },
      status: 202,
      rows: { emails: 1 },
    },
    // GET / is the web dashboard's page (test/dashboard-browser.test.ts).
    { name: 'GET /index.html', url: '/index.html', status: 404, code: 'not_found' },
    { name: 'GET /v1', url: '/v1', status: 404, code: 'not_found' },
    { name: 'GET /v2/emails', url: '/v2/emails', status: 404, code: 'not_found' },
    { name: 'GET /v1/emails/x/events/y', url: '/v1/emails/x/events/y', status: 404, code: 'not_found' },
    { name: 'POST /v1/emails/batch/extra', url: '/v1/emails/batch/extra', body: {}, status: 404, code: 'not_found' },
  ];
  it.each(cases)('$name', async (c) => {
    await runCase(env, key, c);
  });

  it.each([
    { method: 'DELETE', url: '/v1/emails', allow: 'GET, POST' },
    { method: 'PUT', url: '/v1/emails', allow: 'GET, POST' },
    { method: 'DELETE', url: '/v1/emails/', allow: 'GET, POST' },
    { method: 'PUT', url: '/v1/emails/batch', allow: 'POST' },
    // PATCH moves a scheduled email (decisions.md, "Scheduled sending").
    { method: 'DELETE', url: '/v1/emails/01900000-0000-7000-8000-000000000000', allow: 'GET, PATCH' },
    { method: 'POST', url: '/v1/emails/01900000-0000-7000-8000-000000000000/events', allow: 'GET' },
    { method: 'POST', url: '/healthz', allow: 'GET' },
    { method: 'DELETE', url: '/v1/openapi.json', allow: 'GET' },
  ] as const)('$method $url → 405 method_not_allowed with Allow: $allow', async ({ method, url, allow }) => {
    await runCase(env, key, { name: url, method, url, status: 405, code: 'method_not_allowed', resHeaders: { allow } });
  });

  // GET /v1/emails/batch is GET /v1/emails/{email_id} with the id "batch".
  it('GET /v1/emails/batch is read as an email id: 404 not_found', async () => {
    await runCase(env, key, { name: 'batch', url: '/v1/emails/batch', status: 404, code: 'not_found' });
  });

  it('refuses a body over the 40 MiB limit with 413 payload_too_large (inject)', async () => {
    const body = JSON.stringify(email({ text: 'x'.repeat(40 * MiB) }));
    await runCase(env, key, {
      name: '413',
      body,
      headers: { 'content-type': 'application/json' },
      status: 413,
      code: 'payload_too_large',
    });
  });

  it('refuses a body over the limit with 413 on a real socket', async () => {
    const own = await createTestEnv();
    const base = await own.server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const body = JSON.stringify(email({ text: 'x'.repeat(40 * MiB) }));
      // Without a key it is refused before the body is read: an anonymous client cannot make svc hold 40 MiB.
      const anonymous = await fetch(`${base}/v1/emails`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'big-0' },
        body,
      });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ error: { code: 'unauthorized', request_id: 'big-0' } });
      const res = await fetch(`${base}/v1/emails`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-request-id': 'big-1',
          authorization: `Bearer ${await own.key()}`,
        },
        body,
      });
      expect(res.status).toBe(413);
      expect(res.headers.get('x-request-id')).toBe('big-1');
      expect(await res.json()).toMatchObject({
        error: { code: 'payload_too_large', request_id: 'big-1' },
        request_id: 'big-1',
      });
    } finally {
      await own.close();
    }
  });
});

describe('operational endpoints', () => {
  it('serves /healthz and /readyz', async () => {
    expect((await runCase(env, null, { name: 'h', url: '/healthz', status: 200 })).json()).toEqual({
      data: { status: 'ok' },
    });
    expect((await runCase(env, null, { name: 'r', url: '/readyz', status: 200 })).json()).toEqual({
      data: { status: 'ready', store: env.store },
    });
  });

  it('serves Prometheus text on /metrics with svc_http_requests_total', async () => {
    await call(env, key, {});
    const res = await env.server.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expectEnvelope(res);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('# TYPE svc_http_requests_total counter');
    expect(res.body).toMatch(/^svc_http_requests_total\{method="GET",route="\/v1\/emails",status="200"\} \d+$/m);
  });

  it('serves the OpenAPI 3.1 document of the Public API and of every management route', async () => {
    const res = await runCase(env, null, { name: 'openapi', url: '/v1/openapi.json', status: 200, raw: true });
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) =>
      Object.keys(m).map((verb) => `${verb.toUpperCase()} ${p}`),
    );
    const publicOps = [
      'GET /v1/emails',
      'GET /v1/emails/{email_id}',
      'GET /v1/emails/{email_id}/events',
      'POST /v1/emails',
      'POST /v1/emails/batch',
    ];
    const managementOps = Object.keys(MIN_ROLE).map((k) => k.replace(/:([a-z_]+)/g, '{$1}'));
    const outside = ['GET /v1/organizations', 'POST /v1/organizations', 'POST /v1/invitations/{token}/accept'];
    const auth = ['POST /v1/auth/login', 'POST /v1/auth/refresh', 'POST /v1/auth/logout'];
    // svc's own, with an API key: what `svc top --server` reads.
    const top = ['GET /v1/top', 'GET /v1/top/emails/{email_id}'];
    // svc's own send of a message its client built (issue 33).
    const raw = ['POST /v1/emails/raw'];
    // Received mail with an API key (issue 34).
    const received = [
      'GET /v1/received-emails',
      'GET /v1/received-emails/{email_id}',
      'GET /v1/received-emails/{email_id}/raw',
    ];
    // Cancelling and moving a scheduled email (issue 35).
    const scheduling = ['PATCH /v1/emails/{email_id}', 'POST /v1/emails/{email_id}/cancel'];
    expect(ops.sort()).toEqual(
      [...publicOps, ...managementOps, ...outside, ...auth, ...top, ...raw, ...received, ...scheduling].sort(),
    );
    // Any request may meet a server shutting down, a full disk or too many bytes in flight.
    const methods = Object.values(doc.paths as Record<string, Record<string, { responses: Record<string, object> }>>);
    for (const op of methods.flatMap((m) => Object.values(m))) {
      expect(op.responses['503']).toMatchObject({
        description: 'service_unavailable, storage_full, server_busy',
      });
    }
    const send = doc.components.schemas.EmailSendRequest;
    expect(send.type).toBe('object');
    expect(send.required).toEqual(expect.arrayContaining(['from', 'to']));
    expect(send.properties.to).toMatchObject({ type: 'array', minItems: 1, maxItems: 50 });
    expect(Object.keys(send.properties)).toEqual(
      expect.arrayContaining([
        'from',
        'to',
        'cc',
        'bcc',
        'from_name',
        'reply_to',
        'subject',
        'html',
        'text',
        'template',
        'variables',
        'headers',
        'tags',
        'attachments',
      ]),
    );
    const post = doc.paths['/v1/emails'].post;
    expect(post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/EmailSendRequest',
    });
    expect(post.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'Idempotency-Key',
          in: 'header',
          schema: expect.objectContaining({ maxLength: 255 }),
        }),
      ]),
    );
    const limit = doc.paths['/v1/emails'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 100, default: 25 });
  });
});
