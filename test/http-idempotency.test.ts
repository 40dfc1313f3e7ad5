import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { call, email, expectEnvelope, runCase, snapshot } from './http-helpers.ts';

// Send rule 2 and decisions.md "Idempotency": scoped to the project, kept 24 h,
// only accepted sends stored; a concurrent duplicate gets 409 or the replay.

let env: TestEnv;
let key: string;

beforeEach(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
});
afterEach(() => env.close());

const idem = (k: string) => ({ 'idempotency-key': k });
const first = (body: Record<string, unknown>, k = 'k-1') =>
  runCase(env, key, {
    name: 'first',
    body,
    headers: idem(k),
    status: 202,
    resHeaders: { 'idempotent-replayed': null },
    rows: { emails: 1, idempotency_keys: 1 },
  });

describe('Idempotency-Key', () => {
  it('replays the same body: 200, Idempotent-Replayed: true, identical body, one email', async () => {
    const body = email({ to: ['a@example.net', 'b@example.net'], tags: ['t'] });
    const a = await first(body);
    for (const again of [
      body,
      { ...body, tags: ['t'], to: ['a@example.net', 'b@example.net'] },
      Object.fromEntries(Object.entries(body).reverse()),
    ]) {
      const b = await runCase(env, key, {
        name: 'replay',
        body: again,
        headers: idem('k-1'),
        status: 200,
        resHeaders: { 'idempotent-replayed': 'true' },
        rows: { emails: 0, recipients: 0, email_events: 0, idempotency_keys: 0 },
      });
      expect(b.body).toBe(a.body);
    }
  });

  it('refuses the same key with another body: 422 idempotency_key_reused', async () => {
    await first(email());
    await runCase(env, key, {
      name: 'reused',
      body: email({ subject: 'Other' }),
      headers: idem('k-1'),
      status: 422,
      code: 'idempotency_key_reused',
    });
  });

  it('treats another key or no key as a new request', async () => {
    const body = email();
    await first(body);
    await first(body, 'k-2');
    await runCase(env, key, { name: 'none', body, status: 202, rows: { emails: 1, idempotency_keys: 0 } });
  });

  it.each([
    { name: '256 characters', k: 'k'.repeat(256), status: 422 },
    { name: 'empty', k: '', status: 422 },
    { name: '255 characters', k: 'k'.repeat(255), status: 202 },
  ])('checks the key length: $name → $status', async ({ k, status }) => {
    await runCase(env, key, {
      name: 'len',
      body: email(),
      headers: idem(k),
      status,
      ...(status === 422
        ? { code: 'request_validation_failed', fields: ['Idempotency-Key'] }
        : { rows: { emails: 1 } }),
    });
  });

  it.each([
    { name: 'a plain body', template: false },
    { name: 'a template render in between', template: true },
  ])('lets exactly one of concurrent requests with one key create the email ($name)', async ({ template }) => {
    await env.app.templates.create(env.init.project_id, {
      name: 't',
      slug: 't',
      subject_template: 'S',
      text_template: 'T',
    });
    const body = template ? email({ template: 't', subject: undefined, text: undefined }) : email();
    const before = await snapshot(env);
    const results = await Promise.all([0, 1, 2].map(() => call(env, key, { body, headers: idem('race') })));
    results.forEach(expectEnvelope);
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    const winner = results.find((r) => r.statusCode === 202)!;
    for (const r of results.filter((x) => x !== winner)) {
      if (r.statusCode === 200) {
        expect(r.headers['idempotent-replayed']).toBe('true');
        expect(r.body).toBe(winner.body);
      } else {
        expect(r.statusCode).toBe(409);
        expect(r.json().error.code).toBe('idempotency_in_progress');
      }
    }
    const after = await snapshot(env);
    expect([after.emails - before.emails, after.idempotency_keys - before.idempotency_keys]).toEqual([1, 1]);
    // Once the first has finished, the key replays.
    await runCase(env, key, { name: 'then', body, headers: idem('race'), status: 200, rows: { emails: 0 } });
  });

  it('does not store errors: a failed request, then a good one with the same key and body, is accepted', async () => {
    const live = await env.key({ env: 'LIVE' });
    const body = email({ from: 'news@example.com' });
    await runCase(env, live, { name: 'fail', body, headers: idem('k'), status: 422, code: 'domain_not_verified' });
    await verifyDomain(env, 'example.com');
    const ok = await runCase(env, live, {
      name: 'ok',
      body,
      headers: idem('k'),
      status: 202,
      rows: { emails: 1, idempotency_keys: 1 },
    });
    expect(ok.json().data.status).toBe('QUEUED');
    // The replay uses no volume.
    await runCase(env, live, {
      name: 'replay',
      body,
      headers: idem('k'),
      status: 200,
      rows: { emails: 0, usage_counters: 0 },
    });
  });

  it('does not store a validation failure: the corrected request with the same key is accepted', async () => {
    await runCase(env, key, {
      name: 'bad',
      body: email({ to: [] }),
      headers: idem('k'),
      status: 422,
      code: 'request_validation_failed',
    });
    await first(email(), 'k');
  });

  it('scopes keys to the project', async () => {
    const body = email();
    await first(body, 'shared');
    const other = await env.app.accounts.createProject(env.init.organization_id, { name: 'Other' });
    const k2 = (await env.app.keys.createKey(other.id, { name: 'o', env: 'TEST' })).key!;
    await runCase(env, k2, {
      name: 'other',
      body,
      headers: idem('shared'),
      status: 202,
      rows: { emails: 1, idempotency_keys: 1 },
    });
  });

  it('keeps a replay 24 hours', async () => {
    const body = email();
    await first(body);
    env.clock.advance(24 * 3600 * 1000 - 1000);
    await runCase(env, key, { name: 'kept', body, headers: idem('k-1'), status: 200, rows: { emails: 0 } });
    env.clock.advance(1000);
    await runCase(env, key, { name: 'expired', body, headers: idem('k-1'), status: 202, rows: { emails: 1 } });
  });
});
