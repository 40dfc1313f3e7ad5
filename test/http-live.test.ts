import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { addrs, call, elsewhere, email, row, rows, runCase, snapshot } from './http-helpers.ts';

// LIVE keys: DPA, verified domain, suppression, monthly volume and the daily
// ceiling (send rules 1, 3, 7; decisions.md "Plans, volume and rate limits").

let env: TestEnv;
afterEach(() => env.close());

const FROM = 'news@example.com';

async function liveEnv(plan: 'FREE' | 'UNLIMITED' = 'UNLIMITED'): Promise<{ env: TestEnv; key: string }> {
  env = await createTestEnv({}, plan);
  await verifyDomain(env, 'example.com');
  return { env, key: await env.key({ env: 'LIVE' }) };
}

/** A domain row with `status` bound to `projectId`. */
async function addDomain(e: TestEnv, name: string, status: string, projectId: string): Promise<void> {
  const id = randomUUID();
  const now = new Date(e.clock.now()).toISOString();
  await e.query(
    'INSERT INTO domains (id, organization_id, name, status, created_at) VALUES (?, ?, ?, ?, ?)',
    id,
    e.init.organization_id,
    name,
    status,
    now,
  );
  await e.query('INSERT INTO project_domains (project_id, domain_id, created_at) VALUES (?, ?, ?)', projectId, id, now);
}

const secondsTo = (iso: string, now: number) => String(Math.ceil((Date.parse(iso) - now) / 1000));

describe('LIVE sender checks', () => {
  it('refuses an organization without a signed DPA with 422 dpa_not_signed, before the domain check', async () => {
    await liveEnv();
    const org = await env.app.accounts.createOrg({
      name: 'NoDpa',
      owner_email: 'owner@example.com',
      plan: 'UNLIMITED',
    });
    const project = await env.app.accounts.createProject(org.id, { name: 'P' });
    const live = (await env.app.keys.createKey(project.id, { name: 'l', env: 'LIVE' })).key!;
    for (const from of ['a@unverified.example', FROM]) {
      await runCase(env, live, { name: 'dpa', body: email({ from }), status: 422, code: 'dpa_not_signed' });
    }
    const test = (await env.app.keys.createKey(project.id, { name: 't', env: 'TEST' })).key!;
    await runCase(env, test, { name: 'test key', body: email(), status: 202, rows: { emails: 1 } });
  });

  it('answers on fresh data once the DPA is signed by another process (a key kept in memory)', async () => {
    const { key } = await liveEnv();
    const other = elsewhere(env);
    const dpa = (at: string | null) => other.run('UPDATE organizations SET dpa_accepted_at = ?', at);
    try {
      await dpa(null);
      await runCase(env, key, { name: 'unsigned', body: email({ from: FROM }), status: 422, code: 'dpa_not_signed' });
      await dpa(new Date(env.clock.now()).toISOString());
      await runCase(env, key, {
        name: 'signed elsewhere',
        body: email({ from: FROM }),
        status: 202,
        rows: { emails: 1 },
      });
    } finally {
      other.close();
    }
  });

  it.each([
    { name: 'an unknown domain', from: 'a@unverified.example', domain: 'unverified.example' },
    { name: 'an unknown domain in capitals', from: 'a@Unverified.EXAMPLE', domain: 'unverified.example' },
    { name: 'a subdomain of a verified domain', from: 'a@mail.example.com', domain: 'mail.example.com' },
    { name: 'a PENDING domain bound to the project', from: 'a@pending.example', domain: 'pending.example' },
    { name: 'a verified domain bound to another project', from: 'a@other.example', domain: 'other.example' },
  ])('refuses $name with 422 domain_not_verified naming the domain', async ({ from, domain }) => {
    const { key } = await liveEnv();
    await addDomain(env, 'pending.example', 'PENDING', env.init.project_id);
    const other = await env.app.accounts.createProject(env.init.organization_id, { name: 'Other' });
    await addDomain(env, 'other.example', 'VERIFIED', other.id);
    await runCase(env, key, {
      name: from,
      body: email({ from }),
      status: 422,
      code: 'domain_not_verified',
      details: { code: 'domain_not_verified', domain },
    });
  });

  it('queues an email from a verified domain: 202 QUEUED, a queued event, one unit per recipient', async () => {
    const { key } = await liveEnv();
    const res = await runCase(env, key, {
      name: 'queued',
      body: email({ from: 'News@EXAMPLE.com', to: ['a@example.net'], cc: ['b@example.net'], bcc: ['c@example.net'] }),
      status: 202,
      rows: { emails: 1, recipients: 3, email_events: 1, usage_counters: 3 },
    });
    const data = res.json().data;
    expect(data).toEqual({ id: expect.any(String), status: 'QUEUED', skipped_recipients: [] });
    const [ev] = await rows<{ type: string }>(
      env,
      'SELECT ev.type FROM email_events ev JOIN emails e ON e.seq = ev.email_seq WHERE e.id = ?',
      data.id,
    );
    expect(ev).toEqual({ type: 'queued' });
    expect(await rows(env, 'SELECT period, count FROM usage_counters ORDER BY period')).toEqual([
      { period: '2026-03', count: 3 },
      { period: '2026-03-15', count: 3 },
    ]);
  });
});

describe('LIVE suppression', () => {
  it('drops suppressed recipients and lists them with the suppression reason', async () => {
    const { key } = await liveEnv();
    await env.app.suppressions.add(env.init.project_id, { email: 'bounced@example.net', reason: 'HARD_BOUNCE' });
    await env.app.suppressions.add(env.init.project_id, { email: 'manual@example.net', reason: 'MANUAL' });
    const res = await runCase(env, key, {
      name: 'partial',
      body: email({ from: FROM, to: ['ok@example.net', 'Bounced@Example.NET'], cc: ['manual@example.net'] }),
      status: 202,
      rows: { emails: 1, recipients: 1, email_events: 1, usage_counters: 1 },
    });
    expect(res.json().data.skipped_recipients).toEqual([
      { email: 'Bounced@Example.NET', reason: 'HARD_BOUNCE' },
      { email: 'manual@example.net', reason: 'MANUAL' },
    ]);
    const stored = await row<{ to_emails: string; cc_emails: string }>(
      env,
      'SELECT to_emails, cc_emails FROM emails WHERE id = ?',
      res.json().data.id,
    );
    expect(JSON.parse(stored.to_emails)).toEqual(['ok@example.net']);
    expect(await rows(env, 'SELECT address FROM recipients')).toEqual([{ address: 'ok@example.net' }]);
  });

  it('refuses a send whose every recipient is suppressed with 422, creating nothing and using no volume', async () => {
    const { key } = await liveEnv();
    await env.app.suppressions.add(env.init.project_id, { email: 'a@example.net', reason: 'COMPLAINT' });
    await env.app.suppressions.add(env.init.project_id, { email: 'b@example.net', reason: 'UNSUBSCRIBE' });
    await runCase(env, key, {
      name: 'all',
      body: email({ from: FROM, to: ['a@example.net'], bcc: ['B@example.net'] }),
      status: 422,
      code: 'all_recipients_suppressed',
    });
    expect(await rows(env, 'SELECT * FROM usage_counters')).toEqual([]);
  });
});

describe('monthly volume (FREE plan: 100 recipients a month)', () => {
  it('counts recipients, refuses the 101st with 429 and Retry-After to the next UTC month, resets on the 1st', async () => {
    const { key } = await liveEnv('FREE');
    const send = (n: number, status: number, code?: string) => {
      env.clock.advance(1000); // FREE allows 1 request per second per key
      return runCase(env, key, {
        name: `${n}`,
        body: email({ from: FROM, to: addrs(n) }),
        status,
        ...(code ? { code } : {}),
        rows: status === 202 ? { emails: 1, usage_counters: n } : { emails: 0, usage_counters: 0 },
      });
    };
    await send(50, 202);
    await send(49, 202);
    const before = await snapshot(env);
    const refused = await send(2, 429, 'monthly_volume_exceeded');
    // 2026-03-15T12:00:03Z to 2026-04-01T00:00:00Z.
    expect(refused.headers['retry-after']).toBe(secondsTo('2026-04-01T00:00:00Z', env.clock.now()));
    expect(refused.headers['retry-after']).toBe(String(16 * 86400 + 12 * 3600 - 3));
    expect(await snapshot(env)).toEqual(before);
    await send(1, 202); // exactly 100
    await send(1, 429, 'monthly_volume_exceeded');
    // TEST sends use no volume, so they still pass.
    env.clock.advance(1000);
    const test = await env.key({ env: 'TEST' });
    await runCase(env, test, { name: 'test', body: email({ to: addrs(5) }), status: 202, rows: { usage_counters: 0 } });
    env.clock.set('2026-04-01T00:00:00.000Z');
    await send(3, 202);
    expect(await row(env, "SELECT count FROM usage_counters WHERE period = '2026-04'")).toEqual({ count: 3 });
  });

  it('states the Retry-After from the clock at 2026-03-15T12:00Z exactly', async () => {
    const { key } = await liveEnv('FREE');
    await env.query(
      "INSERT INTO usage_counters (organization_id, period, count) VALUES (?, '2026-03', 100)",
      env.init.organization_id,
    );
    const res = await runCase(env, key, {
      name: 'full',
      body: email({ from: FROM }),
      status: 429,
      code: 'monthly_volume_exceeded',
    });
    expect(res.headers['retry-after']).toBe('1425600');
  });

  it('lets only one of two concurrent sends take the last unit', async () => {
    await liveEnv('FREE');
    await env.query(
      "INSERT INTO usage_counters (organization_id, period, count) VALUES (?, '2026-03', 99)",
      env.init.organization_id,
    );
    const keys = [await env.key({ env: 'LIVE' }), await env.key({ env: 'LIVE' })];
    const results = await Promise.all(keys.map((k) => call(env, k, { body: email({ from: FROM }) })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([202, 429]);
    expect(results.find((r) => r.statusCode === 429)!.json().error.code).toBe('monthly_volume_exceeded');
    expect(await row(env, "SELECT count FROM usage_counters WHERE period = '2026-03'")).toEqual({ count: 100 });
    expect(await row(env, 'SELECT count(*) AS n FROM emails')).toEqual({ n: 1 });
  });
});

describe('organization daily ceiling', () => {
  it('refuses past organizations.daily_limit with 429 daily_limit_exceeded and Retry-After to the next UTC day', async () => {
    const { key } = await liveEnv();
    await env.query('UPDATE organizations SET daily_limit = 3 WHERE id = ?', env.init.organization_id);
    await runCase(env, key, {
      name: '2',
      body: email({ from: FROM, to: addrs(2) }),
      status: 202,
      rows: { usage_counters: 2 },
    });
    const refused = await runCase(env, key, {
      name: '2 more',
      body: email({ from: FROM, to: addrs(2) }),
      status: 429,
      code: 'daily_limit_exceeded',
    });
    expect(refused.headers['retry-after']).toBe('43200');
    await runCase(env, key, { name: '1', body: email({ from: FROM }), status: 202, rows: { usage_counters: 1 } });
    env.clock.advance(5 * 3600 * 1000 + 500);
    const again = await runCase(env, key, {
      name: 'full',
      body: email({ from: FROM }),
      status: 429,
      code: 'daily_limit_exceeded',
    });
    expect(again.headers['retry-after']).toBe(secondsTo('2026-03-16T00:00:00Z', env.clock.now()));
    expect(again.headers['retry-after']).toBe(String(7 * 3600));
    env.clock.set('2026-03-16T00:00:00.000Z');
    await runCase(env, key, {
      name: 'next day',
      body: email({ from: FROM, to: addrs(3) }),
      status: 202,
      rows: { usage_counters: 3 },
    });
  });
});
