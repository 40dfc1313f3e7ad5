import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputSchemas } from '../src/emails/index.ts';
import { createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { call, email, runCase } from './http-helpers.ts';

// GET /v1/emails (filters, limit, newest first, before/after cursors),
// GET /v1/emails/{id} and GET /v1/emails/{id}/events.

let env: TestEnv;
let test: string;
let live: string;
let other: string;
const ids: string[] = [];
let foreignId: string;
const T0 = Date.parse('2026-03-15T12:00:00.000Z');
const MIN = 60_000;
const UUID = '01900000-0000-7000-8000-000000000000';

// Seven emails one minute apart (index = minute); a, A and news are senders, target@ is a recipient in to/cc/bcc.
const SEEDS: { live?: boolean; over: Record<string, unknown> }[] = [
  { over: { from: 'a@example.com', to: ['u0@example.net'], tags: ['welcome'] } },
  {
    live: true,
    over: { from: 'news@example.com', to: ['u1@example.net'], cc: ['Target@Example.NET'], tags: ['receipt'] },
  },
  { over: { from: 'A@EXAMPLE.com', to: ['u2@example.net'], bcc: ['target@example.net'], tags: ['welcome', 'vip'] } },
  { over: { from: 'b@example.com', to: ['TARGET@example.net'] } },
  { live: true, over: { from: 'news@example.com', to: ['u4@example.net'], tags: ['vip'] } },
  { over: { from: 'a@example.com', to: ['u5@example.net'] } },
  { over: { from: 'b@example.com', to: ['u6@example.net'], tags: ['welcome'] } },
];

beforeAll(async () => {
  env = await createTestEnv();
  await verifyDomain(env, 'example.com');
  test = await env.key({ env: 'TEST' });
  live = await env.key({ env: 'LIVE' });
  for (const s of SEEDS) {
    const res = await call(env, s.live ? live : test, { body: email(s.over) });
    expect(res.statusCode, res.body).toBe(202);
    ids.push(res.json().data.id as string);
    env.clock.advance(MIN);
  }
  const p = await env.app.accounts.createProject(env.init.organization_id, { name: 'Other' });
  other = (await env.app.keys.createKey(p.id, { name: 'o', env: 'TEST' })).key!;
  const res = await call(env, other, {
    body: email({ from: 'a@example.com', to: ['target@example.net'], tags: ['welcome'] }),
  });
  foreignId = res.json().data.id as string;
});
afterAll(() => env.close());

const at = (minutes: number, offset = 'Z') => {
  const d = new Date(T0 + minutes * MIN + (offset === '+01:00' ? 3600_000 : 0)).toISOString();
  return offset === 'Z' ? d : d.replace('.000Z', offset);
};

describe('GET /v1/emails', () => {
  const cases: { name: string; q: () => Record<string, string>; want: number[] }[] = [
    { name: 'no filter: newest first', q: () => ({}), want: [6, 5, 4, 3, 2, 1, 0] },
    { name: 'status SIMULATED', q: () => ({ status: 'SIMULATED' }), want: [6, 5, 3, 2, 0] },
    { name: 'status QUEUED', q: () => ({ status: 'QUEUED' }), want: [4, 1] },
    { name: 'status DELIVERED', q: () => ({ status: 'DELIVERED' }), want: [] },
    { name: 'from_email, any case', q: () => ({ from_email: 'a@example.com' }), want: [5, 2, 0] },
    { name: 'from_email in capitals', q: () => ({ from_email: 'NEWS@Example.com' }), want: [4, 1] },
    { name: 'to_email matches to, cc and bcc', q: () => ({ to_email: 'target@example.net' }), want: [3, 2, 1] },
    { name: 'to_email in capitals', q: () => ({ to_email: 'TARGET@EXAMPLE.NET' }), want: [3, 2, 1] },
    { name: 'to_email of nobody', q: () => ({ to_email: 'nobody@example.net' }), want: [] },
    { name: 'tag welcome', q: () => ({ tag: 'welcome' }), want: [6, 2, 0] },
    { name: 'tag vip', q: () => ({ tag: 'vip' }), want: [4, 2] },
    { name: 'from (inclusive)', q: () => ({ from: at(2) }), want: [6, 5, 4, 3, 2] },
    { name: 'to (inclusive)', q: () => ({ to: at(2) }), want: [2, 1, 0] },
    { name: 'from and to', q: () => ({ from: at(2), to: at(4) }), want: [4, 3, 2] },
    { name: 'from with a +01:00 offset', q: () => ({ from: at(2, '+01:00') }), want: [6, 5, 4, 3, 2] },
    { name: 'status and tag together', q: () => ({ status: 'SIMULATED', tag: 'welcome' }), want: [6, 2, 0] },
    { name: 'limit 3', q: () => ({ limit: '3' }), want: [6, 5, 4] },
    { name: 'limit 1', q: () => ({ limit: '1' }), want: [6] },
    { name: 'limit 100', q: () => ({ limit: '100' }), want: [6, 5, 4, 3, 2, 1, 0] },
    { name: 'before 4, limit 3', q: () => ({ before: ids[4]!, limit: '3' }), want: [3, 2, 1] },
    { name: 'before 1, limit 3', q: () => ({ before: ids[1]!, limit: '3' }), want: [0] },
    { name: 'before the oldest', q: () => ({ before: ids[0]!, limit: '3' }), want: [] },
    { name: 'after 0, limit 3', q: () => ({ after: ids[0]!, limit: '3' }), want: [3, 2, 1] },
    { name: 'after 3, limit 3', q: () => ({ after: ids[3]!, limit: '3' }), want: [6, 5, 4] },
    { name: 'after the newest', q: () => ({ after: ids[6]!, limit: '3' }), want: [] },
    { name: 'a cursor with a filter', q: () => ({ tag: 'welcome', before: ids[6]! }), want: [2, 0] },
    { name: 'a cursor with a date window', q: () => ({ from: at(1), before: ids[5]!, limit: '2' }), want: [4, 3] },
    { name: 'after with a date window', q: () => ({ to: at(5), after: ids[1]!, limit: '2' }), want: [3, 2] },
    {
      name: 'a window with a tag and a cursor',
      q: () => ({ from: at(1), tag: 'welcome', before: ids[6]! }),
      want: [2],
    },
    { name: 'a cursor of another project', q: () => ({ before: foreignId }), want: [] },
  ];
  it.each(cases)('$name', async ({ q, want }) => {
    const res = await runCase(env, test, {
      name: 'list',
      url: `/v1/emails?${new URLSearchParams(q()).toString()}`,
      status: 200,
    });
    expect(res.json().data.map((e: { id: string }) => ids.indexOf(e.id))).toEqual(want);
  });

  it('pages through seven emails three at a time, backward and forward', async () => {
    const page = async (q: Record<string, string>) =>
      (
        (await call(env, test, { url: `/v1/emails?${new URLSearchParams({ limit: '3', ...q }).toString()}` })).json()
          .data as {
          id: string;
        }[]
      ).map((e) => ids.indexOf(e.id));
    const back: number[][] = [await page({})];
    while (back.at(-1)!.length === 3) back.push(await page({ before: ids[back.at(-1)!.at(-1)!]! }));
    expect(back).toEqual([[6, 5, 4], [3, 2, 1], [0]]);
    const fwd: number[][] = [];
    let cursor = 0;
    for (;;) {
      const p = await page({ after: ids[cursor]! });
      if (p.length === 0) break;
      fwd.push(p);
      cursor = p[0]!;
    }
    expect(fwd).toEqual([
      [3, 2, 1],
      [6, 5, 4],
    ]);
  });

  it.each([
    { name: 'limit 0', q: 'limit=0', field: 'limit' },
    { name: 'limit 101', q: 'limit=101', field: 'limit' },
    { name: 'limit -1', q: 'limit=-1', field: 'limit' },
    { name: 'limit 2.5', q: 'limit=2.5', field: 'limit' },
    { name: 'limit abc', q: 'limit=abc', field: 'limit' },
    { name: 'an unknown status', q: 'status=LOST', field: 'status' },
    { name: 'a status in lower case', q: 'status=queued', field: 'status' },
    { name: 'from not a date-time', q: 'from=yesterday', field: 'from' },
    { name: 'to a date without time', q: 'to=2026-03-15', field: 'to' },
    { name: 'before not a uuid', q: 'before=123', field: 'before' },
    { name: 'before and after together', q: `before=${UUID}&after=${UUID}`, field: 'before' },
  ])('refuses $name with 422 naming the parameter', async ({ q, field }) => {
    await runCase(env, test, {
      name: q,
      url: `/v1/emails?${q}`,
      status: 422,
      code: 'request_validation_failed',
      fields: [field],
    });
  });

  it('never shows emails of another project', async () => {
    const mine = (await call(env, test, { url: '/v1/emails?to_email=target@example.net&limit=100' })).json().data;
    expect(mine.map((e: { id: string }) => e.id)).not.toContain(foreignId);
    const theirs = (await call(env, other, { url: '/v1/emails' })).json().data;
    expect(theirs.map((e: { id: string }) => e.id)).toEqual([foreignId]);
  });

  it('returns list items without the detail-only fields', async () => {
    const [item] = (await call(env, test, { url: '/v1/emails?limit=1' })).json().data;
    outputSchemas.emailListItemSchema.strict().parse(item);
    for (const k of [
      'from_name',
      'cc_emails',
      'bcc_emails',
      'reply_to',
      'html_body',
      'text_body',
      'headers',
      'failed_at',
    ]) {
      expect(item).not.toHaveProperty(k);
    }
  });
});

describe('GET /v1/emails default limit', () => {
  it('returns 25 by default', async () => {
    const e = await createTestEnv();
    try {
      const k = await e.key({ env: 'TEST' });
      await call(e, k, { url: '/v1/emails/batch', body: { emails: Array.from({ length: 30 }, () => email()) } });
      const res = await runCase(e, k, { name: 'default', status: 200 });
      expect(res.json().data).toHaveLength(25);
    } finally {
      await e.close();
    }
  });
});

describe('GET /v1/emails/{id} and /events', () => {
  it('returns the EmailDetail of an email', async () => {
    const body = email({
      from: 'a@example.com',
      from_name: 'Acme Support',
      to: ['x@example.net'],
      cc: ['c@example.net'],
      bcc: ['b@example.net'],
      reply_to: ['help@example.com'],
      subject: 'Detail',
      html: '<p>h</p>',
      text: 't',
      tags: ['one', 'two'],
      headers: { 'X-Trace': 'abc' },
    });
    const sent = await call(env, test, { body });
    const res = await runCase(env, test, { name: 'get', url: `/v1/emails/${sent.json().data.id}`, status: 200 });
    const d = res.json().data;
    outputSchemas.emailDetailSchema.parse(d);
    expect(d).toMatchObject({
      id: sent.json().data.id,
      project_id: env.init.project_id,
      from_email: 'a@example.com',
      from_name: 'Acme Support',
      to_emails: ['x@example.net'],
      cc_emails: ['c@example.net'],
      bcc_emails: ['b@example.net'],
      reply_to: ['help@example.com'],
      subject: 'Detail',
      status: 'SIMULATED',
      tags: ['one', 'two'],
      headers: { 'X-Trace': 'abc' },
      html_body: '<p>h</p>',
      text_body: 't',
      created_at: new Date(env.clock.now()).toISOString(),
      sent_at: null,
      delivered_at: null,
      failed_at: null,
    });
    expect(d.source ?? 'API').toBe('API');
  });

  it('returns nulls for what was not sent', async () => {
    const d = (await runCase(env, test, { name: 'get', url: `/v1/emails/${ids[3]}`, status: 200 })).json().data;
    expect(d).toMatchObject({
      from_name: null,
      cc_emails: null,
      bcc_emails: null,
      reply_to: null,
      html_body: null,
      tags: [],
      headers: {},
    });
  });

  it.each([
    { name: 'TEST', i: 0, type: 'simulated' },
    { name: 'LIVE', i: 1, type: 'queued' },
  ])('lists the events of a $name email', async ({ i, type }) => {
    const res = await runCase(env, test, { name: 'events', url: `/v1/emails/${ids[i]}/events`, status: 200 });
    const events = res.json().data;
    expect(events).toEqual([
      { id: expect.any(String), type, data: {}, timestamp: at(i), ip_address: null, user_agent: null },
    ]);
    outputSchemas.eventSchema.parse(events[0]);
  });

  const missing = [
    { name: 'a non-uuid id', id: 'not-a-uuid' },
    { name: 'a numeric id', id: '42' },
    { name: 'an unknown uuid', id: UUID },
    { name: "another project's email", id: '' },
  ];
  it.each(missing)('answers 404 not_found for $name', async ({ id }) => {
    const target = id || foreignId;
    await runCase(env, test, { name: 'get', url: `/v1/emails/${target}`, status: 404, code: 'not_found' });
    await runCase(env, test, { name: 'events', url: `/v1/emails/${target}/events`, status: 404, code: 'not_found' });
  });

  it('finds the other project email with its own key', async () => {
    await runCase(env, other, { name: 'own', url: `/v1/emails/${foreignId}`, status: 200 });
  });
});
