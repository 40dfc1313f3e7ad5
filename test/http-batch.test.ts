import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { addrs, email, row, runCase, type Case, type Res } from './http-helpers.ts';

// POST /v1/emails/batch: batch rules 1–4.

let env: TestEnv;
afterEach(() => env.close());

const URL = '/v1/emails/batch';
const FROM = 'news@example.com';

interface Result {
  index: number;
  id: string | null;
  status: string | null;
  skipped_recipients: { email: string; reason: string }[];
  error: { status_code: number; code: string; message: string; details?: Record<string, unknown> } | null;
}

async function resultsOf(res: Res): Promise<Result[]> {
  const data = res.json().data;
  expect(Object.keys(data).sort()).toEqual(['accepted_count', 'failed_count', 'results']);
  const results = data.results as Result[];
  for (const [i, r] of results.entries()) {
    expect(Object.keys(r).sort()).toEqual(['error', 'id', 'index', 'skipped_recipients', 'status']);
    expect(r.index).toBe(i);
    expect(Array.isArray(r.skipped_recipients)).toBe(true);
    if (r.error === null) {
      expect(r.id).toEqual(expect.any(String));
      expect(await row(env, 'SELECT count(*) AS n FROM emails WHERE id = ?', r.id)).toEqual({ n: 1 });
    } else {
      expect([r.id, r.status]).toEqual([null, null]);
      expect(r.error).toMatchObject({
        status_code: expect.any(Number),
        code: expect.any(String),
        message: expect.any(String),
      });
    }
  }
  const accepted = results.filter((r) => r.error === null).length;
  expect(data.accepted_count).toBe(accepted);
  expect(data.failed_count).toBe(results.length - accepted);
  return results;
}

describe('per-item results', () => {
  it('processes items independently, in input order, with index, id, status and error', async () => {
    env = await createTestEnv();
    const key = await env.key({ env: 'TEST' });
    await env.app.templates.create(env.init.project_id, {
      name: 't',
      slug: 't',
      subject_template: 'S',
      text_template: '{{ v }}',
    });
    const res = await runCase(env, key, {
      name: 'mixed',
      url: URL,
      body: {
        emails: [
          email({ subject: 'zero' }),
          email({ headers: { 'X-Service-Id': '1' } }),
          email({ template: 't', subject: undefined, text: undefined }),
          email({ template: 'missing', subject: undefined, text: undefined }),
          email({ attachments: [{ filename: 'a', content_base64: '***' }] }),
          email({ headers: { 'X-A': 'a\nb' } }),
          email({ subject: 'six', to: addrs(3) }),
        ],
      },
      status: 202,
      rows: { emails: 2, recipients: 4, email_events: 2, usage_counters: 0 },
    });
    const r = await resultsOf(res);
    expect(r.map((x) => x.error?.code ?? x.status)).toEqual([
      'SIMULATED',
      'reserved_email_header',
      'template_variable_missing',
      'not_found',
      'invalid_attachment',
      'invalid_header_value',
      'SIMULATED',
    ]);
    expect(r.map((x) => x.error?.status_code ?? null)).toEqual([null, 422, 422, 404, 400, 400, null]);
    expect(r[1]!.error!.details).toMatchObject({ header: 'X-Service-Id' });
    expect(await row(env, 'SELECT subject FROM emails WHERE id = ?', r[0]!.id)).toEqual({ subject: 'zero' });
    expect(await row(env, 'SELECT subject FROM emails WHERE id = ?', r[6]!.id)).toEqual({ subject: 'six' });
  });

  it('applies LIVE rules per item: suppression, all suppressed, unverified domain', async () => {
    env = await createTestEnv();
    await verifyDomain(env, 'example.com');
    const key = await env.key({ env: 'LIVE' });
    await env.app.suppressions.add(env.init.project_id, { email: 'bounced@example.net', reason: 'HARD_BOUNCE' });
    const res = await runCase(env, key, {
      name: 'live',
      url: URL,
      body: {
        emails: [
          email({ from: FROM, to: ['ok@example.net', 'bounced@example.net'] }),
          email({ from: FROM, to: ['Bounced@example.net'] }),
          email({ from: 'x@unverified.example' }),
          email({ from: FROM, to: addrs(2) }),
        ],
      },
      status: 202,
      rows: { emails: 2, recipients: 3, email_events: 2, usage_counters: 3 },
    });
    const r = await resultsOf(res);
    expect(r[0]).toMatchObject({
      status: 'QUEUED',
      skipped_recipients: [{ email: 'bounced@example.net', reason: 'HARD_BOUNCE' }],
    });
    expect(r[1]!.error).toMatchObject({ status_code: 422, code: 'all_recipients_suppressed' });
    expect(r[2]!.error).toMatchObject({
      status_code: 422,
      code: 'domain_not_verified',
      details: { domain: 'unverified.example' },
    });
    expect(r[3]).toMatchObject({ status: 'QUEUED', skipped_recipients: [], error: null });
  });

  it('refuses the items past the monthly volume with status_code 429', async () => {
    env = await createTestEnv({}, 'FREE');
    await verifyDomain(env, 'example.com');
    const key = await env.key({ env: 'LIVE' });
    const res = await runCase(env, key, {
      name: 'volume',
      url: URL,
      body: { emails: [40, 40, 40].map((n, i) => email({ from: FROM, to: addrs(n, `b${i}-`) })) },
      status: 202,
      rows: { emails: 2, usage_counters: 80 },
    });
    const failed = (await resultsOf(res)).filter((x) => x.error);
    expect(failed.map((x) => [x.error!.status_code, x.error!.code])).toEqual([[429, 'monthly_volume_exceeded']]);
  });

  it('accepts 100 items', async () => {
    env = await createTestEnv();
    const key = await env.key({ env: 'TEST' });
    const res = await runCase(env, key, {
      name: '100',
      url: URL,
      body: { emails: Array.from({ length: 100 }, (_, i) => email({ subject: `n${i}` })) },
      status: 202,
      rows: { emails: 100, recipients: 100, email_events: 100 },
    });
    expect(await resultsOf(res)).toHaveLength(100);
  });

  it('accepts 100 template items (renders queue without failing)', async () => {
    env = await createTestEnv();
    const key = await env.key({ env: 'TEST' });
    await env.app.templates.create(env.init.project_id, {
      name: 't',
      slug: 't',
      subject_template: 'Hi {{ n }}',
      html_template: '<p>{{ n }}</p>',
    });
    const res = await runCase(env, key, {
      name: '100 templates',
      url: URL,
      body: {
        emails: Array.from({ length: 100 }, (_, i) =>
          email({ template: 't', subject: undefined, text: undefined, variables: { n: i } }),
        ),
      },
      status: 202,
      rows: { emails: 100 },
    });
    const r = await resultsOf(res);
    expect(r.filter((x) => x.error)).toEqual([]);
    expect(await row(env, 'SELECT subject FROM emails WHERE id = ?', r[57]!.id)).toEqual({ subject: 'Hi 57' });
  });

  it('ignores an Idempotency-Key header (the batch has no idempotency support)', async () => {
    env = await createTestEnv();
    const key = await env.key({ env: 'TEST' });
    for (let i = 0; i < 2; i++) {
      await runCase(env, key, {
        name: 'again',
        url: URL,
        headers: { 'idempotency-key': 'same' },
        body: { emails: [email()] },
        status: 202,
        resHeaders: { 'idempotent-replayed': null },
        rows: { emails: 1, idempotency_keys: 0 },
      });
    }
  });
});

describe('invalid batch structure rejects the whole request (422, nothing created)', () => {
  const bad = (name: string, body: unknown, fields: string[]): Case => ({
    name,
    url: URL,
    method: 'POST',
    body,
    status: 422,
    code: 'request_validation_failed',
    fields,
  });
  const cases: Case[] = [
    bad('emails missing', {}, ['emails']),
    bad('emails empty', { emails: [] }, ['emails']),
    bad('emails not an array', { emails: email() }, ['emails']),
    bad('101 items', { emails: Array.from({ length: 101 }, () => email()) }, ['emails']),
    bad('one item fails its schema', { emails: [email(), email({ to: undefined }), email()] }, ['emails.1.to']),
    bad('an item over a limit', { emails: [email(), email({ tags: ['x'.repeat(33)] })] }, ['emails.1.tags.0']),
    bad('an item with html and template', { emails: [email({ template: 't', html: '<p/>' })] }, ['emails.0.html']),
    bad('an item that is not an object', { emails: [email(), 'x'] }, ['emails.1']),
    // A misspelt field is named, in an item and at the top (issue 26, item 11).
    {
      ...bad('an item with a misspelt field', { emails: [email(), email(), email(), email({ tag: ['x'] })] }, [
        'emails.3.tag',
      ]),
      details: { fields: [{ field: 'emails.3.tag', message: 'unknown field "tag"; did you mean "tags"?' }] },
    },
    {
      ...bad('a misspelt field beside emails', { emails: [email()], dry_run: true }, ['dry_run']),
      details: { fields: [{ field: 'dry_run', message: 'unknown field "dry_run"', code: 'unrecognized_keys' }] },
    },
  ];
  it.each(cases)('$name', async (c) => {
    env = await createTestEnv();
    await runCase(env, await env.key({ env: 'TEST' }), c);
  });
});
