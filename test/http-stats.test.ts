import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/store/db.ts';
import { STAT_TYPES } from '../src/stats/index.ts';
import { count, createTestEnv, testStore, verifyDomain, type TestEnv } from './harness.ts';
import { email, expectError, fieldsOf } from './http-helpers.ts';

// Usage (GET .../usage) and stats (GET .../projects/{id}/stats) over the Management API:
// the numbers after real sends, UTC buckets across hour and day boundaries, the rollup
// that migration 0010's trigger keeps, and its backfill.

let env: TestEnv;
afterEach(() => env.close());
const tokens: Record<string, string> = {};

async function setup(plan: 'FREE' | 'PAID' | 'UNLIMITED' = 'PAID'): Promise<void> {
  env = await createTestEnv({}, plan);
  await env.app.accounts.createUser({ email: 'viewer@example.com', password: 'member-password-1' });
  await env.app.accounts.addMember(env.init.organization_id, { email: 'viewer@example.com', role: 'VIEWER' });
  await env.app.accounts.createUser({ email: 'outsider@example.com', password: 'member-password-1' });
  const other = await env.app.accounts.createOrg({ name: 'Other', owner_email: 'outsider@example.com' });
  otherProject = (await env.app.accounts.createProject(other.id, { name: 'Theirs' })).id;
  await verifyDomain(env, 'example.com');
  await signIn();
}
let otherProject = '';

/** Fresh access tokens (they live 15 minutes; tests move the clock by hours). */
async function signIn(): Promise<void> {
  const login = async (address: string, password: string) =>
    (await env.server.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: address, password } })).json<{
      data: { access_token: string };
    }>().data.access_token;
  tokens.OWNER = await login('owner@example.com', 'owner-password-1');
  tokens.VIEWER = await login('viewer@example.com', 'member-password-1');
  tokens.OUTSIDER = await login('outsider@example.com', 'member-password-1');
}

const O = () => `/v1/organizations/${env.init.organization_id}`;
const P = () => `${O()}/projects/${env.init.project_id}`;
const get = (url: string, who = 'VIEWER') =>
  env.server.inject({ method: 'GET', url, headers: { authorization: `Bearer ${tokens[who]}` } });

async function send(key: string, to: string[], n = 1): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${key}` },
      payload: email({ from: 'sender@example.com', to }),
    });
    expect(res.statusCode, res.body).toBe(202);
  }
}

const zero = { ...Object.fromEntries(STAT_TYPES.map((t) => [t, 0])), bounced_by_category: {} };

describe('GET .../usage', () => {
  it("counts this month's LIVE recipients against the plan, not TEST ones, and the domains", async () => {
    await setup('PAID');
    const live = await env.key({ env: 'LIVE' });
    const test = await env.key({ env: 'TEST' });
    await send(live, ['a@example.net', 'b@example.net', 'c@example.net'], 2);
    await send(test, ['a@example.net'], 5);
    const res = await get(`${O()}/usage`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      organization_id: env.init.organization_id,
      plan: 'PAID',
      monthly_volume: {
        period: '2026-03',
        used: 6,
        limit: 10_000,
        remaining: 9_994,
        resets_at: '2026-04-01T00:00:00.000Z',
      },
      daily_volume: {
        period: '2026-03-15',
        used: 6,
        limit: null,
        remaining: null,
        resets_at: '2026-03-16T00:00:00.000Z',
      },
      domains: { used: 1, limit: 5 },
    });
  });

  it('starts the month again at 0, never shows a negative remainder, and says null for no ceiling', async () => {
    await setup('FREE');
    const live = await env.key({ env: 'LIVE' });
    await send(live, ['a@example.net', 'b@example.net']);
    await env.app.accounts.setPlan('Acme', 'FREE');
    await env.query('UPDATE usage_counters SET count = 150 WHERE length(period) = 7');
    expect((await get(`${O()}/usage`)).json().data.monthly_volume).toMatchObject({
      used: 150,
      limit: 100,
      remaining: 0,
    });
    env.clock.advance(17 * 86_400_000); // 2026-04-01T12:00Z
    await signIn();
    expect((await get(`${O()}/usage`)).json().data.monthly_volume).toMatchObject({
      period: '2026-04',
      used: 0,
      remaining: 100,
      resets_at: '2026-05-01T00:00:00.000Z',
    });
    await env.app.accounts.setPlan('Acme', 'UNLIMITED');
    expect((await get(`${O()}/usage`)).json().data).toMatchObject({
      plan: 'UNLIMITED',
      monthly_volume: { limit: null, remaining: null },
      domains: { used: 1, limit: null },
    });
  });

  it('is read by a VIEWER and is a 404 for a user of another organization', async () => {
    await setup();
    expect((await get(`${O()}/usage`, 'VIEWER')).statusCode).toBe(200);
    expectError(await get(`${O()}/usage`, 'OUTSIDER'), 404, 'not_found');
  });
});

describe('GET .../projects/{id}/stats', () => {
  it('counts per UTC hour and per day what was sent, across bucket boundaries, from the rollup', async () => {
    await setup();
    const live = await env.key({ env: 'LIVE' });
    const test = await env.key({ env: 'TEST' });
    // 2026-03-15T12:00Z: 2 LIVE, 1 TEST. 12:59:59.999: 1 LIVE. 13:00: 3 TEST. Next day 00:00: 1 LIVE.
    await send(live, ['a@example.net'], 2);
    await send(test, ['a@example.net']);
    env.clock.advance(3_599_999);
    await send(live, ['a@example.net']);
    env.clock.advance(1);
    await send(test, ['a@example.net'], 3);
    env.clock.advance(11 * 3_600_000);
    await send(live, ['a@example.net']);
    await signIn();

    const hours = await get(`${P()}/stats?granularity=hour&from=2026-03-15T11:00:00Z&to=2026-03-16T01:00:00Z`);
    expect(hours.statusCode, hours.body).toBe(200);
    const h = hours.json().data;
    expect(h).toMatchObject({
      project_id: env.init.project_id,
      granularity: 'hour',
      from: '2026-03-15T11:00:00.000Z',
      to: '2026-03-16T01:00:00.000Z',
    });
    expect(h.buckets).toHaveLength(14);
    const nonZero = (h.buckets as Record<string, number | string>[])
      .filter((b) => STAT_TYPES.some((t) => b[t] !== 0))
      .map((b) => [b.start, b.queued, b.simulated]);
    expect(nonZero).toEqual([
      ['2026-03-15T12:00:00.000Z', 3, 1],
      ['2026-03-15T13:00:00.000Z', 0, 3],
      ['2026-03-16T00:00:00.000Z', 1, 0],
    ]);
    expect(h.totals).toEqual({ ...zero, queued: 4, simulated: 4 });

    // Day buckets sum the hours; a date-only range works; the default is the last 7 days.
    const days = (await get(`${P()}/stats?granularity=day&from=2026-03-15&to=2026-03-17`)).json().data;
    expect(days.buckets).toEqual([
      { start: '2026-03-15T00:00:00.000Z', ...zero, queued: 3, simulated: 4 },
      { start: '2026-03-16T00:00:00.000Z', ...zero, queued: 1, simulated: 0 },
    ]);
    const week = (await get(`${P()}/stats`)).json().data;
    expect([week.granularity, week.from, week.to, week.buckets.length]).toEqual([
      'day',
      '2026-03-10T00:00:00.000Z',
      '2026-03-17T00:00:00.000Z',
      7,
    ]);
    expect(week.totals).toEqual(h.totals);
    // What the rollup says equals a count over the events.
    const events = await env.query(
      "SELECT type, CAST(count(*) AS INTEGER) AS n FROM email_events WHERE type IN ('queued', 'simulated') GROUP BY type ORDER BY type",
    );
    expect(events).toEqual([
      { type: 'queued', n: 4 },
      { type: 'simulated', n: 4 },
    ]);
  });

  it('counts delivery and tracking events of any writer, and not sending or smtp_connected', async () => {
    await setup();
    await send(await env.key({ env: 'LIVE' }), ['a@example.net']);
    const [{ seq }] = (await env.query<{ seq: number }>('SELECT seq FROM emails')) as [{ seq: number }];
    const types = ['sending', 'smtp_connected', 'sent', 'delivered', 'opened', 'opened', 'clicked', 'bounced'];
    for (const [i, type] of [...types, 'complained', 'failed', 'failed'].entries()) {
      await env.query(
        "INSERT INTO email_events (id, email_seq, type, created_at) VALUES (?, ?, ?, '2026-03-15T12:30:00.000Z')",
        `written-elsewhere-${i}`,
        seq,
        type,
      );
    }
    const totals = (await get(`${P()}/stats?granularity=hour`)).json().data.totals;
    expect(totals).toEqual({
      ...zero,
      queued: 1,
      sent: 1,
      delivered: 1,
      opened: 2,
      clicked: 1,
      bounced: 1,
      bounced_by_category: { unknown: 1 },
      complained: 1,
      failed: 2,
    });
  });

  it('counts bounces by category, unknown for a bounce without one or with data that is not JSON', async () => {
    await setup();
    await send(await env.key({ env: 'LIVE' }), ['a@example.net']);
    const [{ seq }] = (await env.query<{ seq: number }>('SELECT seq FROM emails')) as [{ seq: number }];
    const bounces: [string, string][] = [
      ['2026-03-15T12:10:00.000Z', JSON.stringify({ bounce_category: 'mailbox-full' })],
      ['2026-03-15T12:20:00.000Z', JSON.stringify({ bounce_category: 'mailbox-full' })],
      ['2026-03-15T13:30:00.000Z', JSON.stringify({ bounce_category: 'invalid-recipient' })],
      ['2026-03-15T13:40:00.000Z', '{}'],
      ['2026-03-15T13:50:00.000Z', 'not json'],
    ];
    for (const [i, [at, data]] of bounces.entries()) {
      await env.query(
        "INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES (?, ?, 'bounced', ?, ?)",
        `bounce-${i}`,
        seq,
        data,
        at,
      );
    }
    const stats = (await get(`${P()}/stats?granularity=hour&from=2026-03-15T12:00:00Z&to=2026-03-15T14:00:00Z`)).json()
      .data;
    expect(stats.totals).toMatchObject({
      bounced: 5,
      bounced_by_category: { 'mailbox-full': 2, 'invalid-recipient': 1, unknown: 2 },
    });
    expect(stats.buckets.map((b: { bounced_by_category: object }) => b.bounced_by_category)).toEqual([
      { 'mailbox-full': 2 },
      { 'invalid-recipient': 1, unknown: 2 },
    ]);
    const day = (await get(`${P()}/stats?from=2026-03-15&to=2026-03-16`)).json().data;
    expect(day.buckets[0].bounced_by_category).toEqual(stats.totals.bounced_by_category);
  });

  it.each([
    ['granularity=week', 'granularity'],
    ['from=2026-03-15&to=2026-03-14', 'from'],
    ['from=2026-03-15&to=2026-03-15', 'from'],
    ['granularity=hour&from=2026-01-01&to=2026-03-01', 'to'],
    ['from=2024-01-01&to=2026-01-01', 'to'],
    ['from=yesterday', 'from'],
    ['bucket=day', 'bucket'],
  ])('refuses %s with 422 request_validation_failed', async (query, field) => {
    await setup();
    const res = await get(`${P()}/stats?${query}`);
    expectError(res, 422, 'request_validation_failed');
    expect(fieldsOf(res)).toContain(field);
  });

  it('is read by a VIEWER; 404 for a non-member and for a project of another organization', async () => {
    await setup();
    expect((await get(`${P()}/stats`, 'VIEWER')).statusCode).toBe(200);
    expectError(await get(`${P()}/stats`, 'OUTSIDER'), 404, 'not_found');
    expectError(await get(`${O()}/projects/${otherProject}/stats`, 'OWNER'), 404, 'not_found');
  });
});

describe('the rollup', () => {
  it('goes with its project, also when the organization goes', async () => {
    await setup();
    await send(await env.key({ env: 'TEST' }), ['a@example.net']);
    const rows = async () => count(env, 'email_stats');
    expect(await rows()).toBe(1);
    await env.app.accounts.deleteProject(env.init.project_id);
    expect(await rows()).toBe(0);
    const web2 = await env.app.accounts.createProject(env.init.organization_id, { name: 'Web 2' });
    const k = (await env.app.keys.createKey(web2.id, { name: 'k', env: 'TEST' })).key!;
    await send(k, ['a@example.net']);
    expect(await rows()).toBe(1);
    await env.app.accounts.deleteOrg(env.init.organization_id);
    expect(await rows()).toBe(0);
  });
});

// SQLite's migration 0010 backfilled the rollup; PostgreSQL's schema starts with it.
describe.skipIf(testStore() === 'postgres')('the rollup migration (0010)', () => {
  it('backfills email_stats from the events already stored', async () => {
    await setup();
    await send(await env.key({ env: 'LIVE' }), ['a@example.net', 'b@example.net'], 3);
    env.clock.advance(86_400_000);
    await send(await env.key({ env: 'TEST' }), ['a@example.net'], 2);
    await signIn();
    // As before migration 0010: no rollup; then events nothing has counted.
    const db = env.app.db;
    db.exec('DROP TRIGGER email_events_stats; DROP TRIGGER projects_stats_delete; DROP TABLE email_stats;');
    const seq = db.prepare('SELECT min(seq) FROM emails').pluck().get() as number;
    const add = db.prepare('INSERT INTO email_events (id, email_seq, type, created_at) VALUES (?, ?, ?, ?)');
    add.run('ev-1', seq, 'delivered', '2026-03-15T23:59:59.999Z');
    add.run('ev-2', seq, 'opened', '2026-03-16T00:00:00.000Z');
    add.run('ev-3', seq, 'sending', '2026-03-16T00:00:00.000Z');
    // Migration 0010 as the store runs it (later migrations are not replayed).
    db.transaction(() => db.exec(loadMigrations().find((m) => m.version === 10)!.sql))();

    const rollup = db.prepare('SELECT project_id, bucket_hour, type, count FROM email_stats ORDER BY 1, 2, 3').all();
    const counted = db
      .prepare(
        `SELECT e.project_id, substr(ev.created_at, 1, 13) AS bucket_hour, ev.type, count(*) AS count
         FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
         WHERE ev.type NOT IN ('sending', 'smtp_connected') GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      )
      .all();
    expect(rollup).toEqual(counted);
    expect(rollup.map((r) => Object.values(r as object).slice(1))).toEqual([
      ['2026-03-15T12', 'queued', 3],
      ['2026-03-15T23', 'delivered', 1],
      ['2026-03-16T00', 'opened', 1],
      ['2026-03-16T12', 'simulated', 2],
    ]);
    // And the trigger counts from then on.
    add.run('ev-4', seq, 'opened', '2026-03-16T00:10:00.000Z');
    expect(
      (await get(`${P()}/stats?granularity=hour&from=2026-03-16T00:00:00Z&to=2026-03-16T01:00:00Z`)).json().data.totals
        .opened,
    ).toBe(2);
  });
});

// SQLite's migration 0025 backfilled the bounce categories; PostgreSQL's 0013 does the same in SQL of its own.
describe.skipIf(testStore() === 'postgres')('the bounce categories migration (0025)', () => {
  it('counts by category the bounces already stored, and the trigger counts them from then on', async () => {
    await setup();
    await send(await env.key({ env: 'LIVE' }), ['a@example.net']);
    const db = env.app.db;
    // As before migration 0025: the trigger of 0014, which counts no category.
    db.transaction(() => db.exec(loadMigrations().find((m) => m.version === 14)!.sql))();
    const seq = db.prepare('SELECT min(seq) FROM emails').pluck().get() as number;
    const add = db.prepare(
      "INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES (?, ?, 'bounced', ?, ?)",
    );
    add.run('ev-1', seq, '{"bounce_category":"mailbox-full"}', '2026-03-15T12:10:00.000Z');
    add.run('ev-2', seq, '{}', '2026-03-15T12:20:00.000Z');
    db.transaction(() => db.exec(loadMigrations().find((m) => m.version === 25)!.sql))();
    add.run('ev-3', seq, '{"bounce_category":"mailbox-full"}', '2026-03-15T12:30:00.000Z');
    const totals = (await get(`${P()}/stats?granularity=hour`)).json().data.totals;
    expect(totals).toMatchObject({ bounced: 3, bounced_by_category: { 'mailbox-full': 2, unknown: 1 } });
  });
});
