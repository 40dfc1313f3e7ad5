import { afterEach, describe, expect, it } from 'vitest';
import { count, createTestEnv, verifyDomain, type TestEnv } from './harness.ts';

// Retention (issue 16, item 3): bodies and attachments of emails older than
// --body-retention (30 days) are dropped in small batches; metadata and events stay.

let env: TestEnv;
afterEach(() => env.close());

const DAY = 86_400_000;

async function send(key: string, n: number, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${key}` },
    payload: {
      from: 'news@example.com',
      to: [`r${n}@example.net`],
      subject: `n${n}`,
      text: 'hello',
      html: '<p>hello</p>',
      attachments: [{ filename: 'a.txt', content_base64: Buffer.from('attached').toString('base64') }],
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data.id as string;
}

const row = async (id: string) =>
  (
    await env.query<{ seq: number; html_body: string | null; text_body: string | null; status: string }>(
      'SELECT seq, html_body, text_body, status FROM emails LEFT JOIN email_bodies ON email_seq = seq WHERE id = ?',
      id,
    )
  )[0]!;

describe('body retention', () => {
  it('drops the bodies and attachments of final emails older than 30 days, in batches, and keeps the rest', async () => {
    env = await createTestEnv();
    const key = await env.key();
    const old: string[] = [];
    for (let i = 0; i < 450; i++) old.push(await send(key, i));
    env.clock.advance(29 * DAY);
    const recent = await send(key, 999);
    env.clock.advance(2 * DAY);

    const dropped = await env.app.retention.runOnce();
    expect(dropped).toEqual({ bodies: 450, emails: 0, deliveries: 0, received: 0 });
    for (const id of [old[0]!, old[449]!]) {
      expect(await row(id)).toMatchObject({ html_body: null, text_body: null, status: 'SIMULATED' });
      expect(await count(env, 'attachments', 'email_seq = ?', (await row(id)).seq)).toBe(0);
      expect(await count(env, 'email_events', 'email_seq = ?', (await row(id)).seq)).toBe(1);
      expect(await count(env, 'recipients', 'email_seq = ?', (await row(id)).seq)).toBe(1);
    }
    expect(await row(recent)).toMatchObject({ html_body: '<p>hello</p>', text_body: 'hello' });
    expect(await count(env, 'attachments', 'email_seq = ?', (await row(recent)).seq)).toBe(1);

    // The API still shows the email, with no bodies.
    const res = await env.server.inject({ url: `/v1/emails/${old[0]}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: old[0], subject: 'n0', html_body: null, text_body: null });
    // A second pass has nothing left to drop.
    expect((await env.app.retention.runOnce()).bodies).toBe(0);
  });

  it('drops the stored message of an email passed through as written (POST /v1/emails/raw, the relay)', async () => {
    env = await createTestEnv();
    const key = await env.key();
    const message = 'From: news@example.com\r\nTo: r@example.net\r\nSubject: raw\r\n\r\nhello\r\n';
    const res = await env.server.inject({
      method: 'POST',
      url: '/v1/emails/raw',
      headers: { authorization: `Bearer ${key}` },
      payload: { raw: Buffer.from(message).toString('base64') },
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().data.id as string;
    const stored = () =>
      env.query('SELECT 1 FROM email_bodies b JOIN emails e ON e.seq = b.email_seq WHERE e.id = ?', id);
    expect(await stored()).toHaveLength(1);
    env.clock.advance(31 * DAY);
    expect((await env.app.retention.runOnce()).bodies).toBe(1);
    expect(await stored()).toHaveLength(0);
    const got = await env.server.inject({ url: `/v1/emails/${id}`, headers: { authorization: `Bearer ${key}` } });
    expect(got.json().data).toMatchObject({ subject: 'raw', text_body: null, html_body: null });
  });

  it('keeps the bodies of an old email that is still being delivered', async () => {
    env = await createTestEnv();
    await verifyDomain(env, 'example.com');
    const live = await env.key({ env: 'LIVE' });
    const queued = await send(live, 1);
    env.clock.advance(40 * DAY);
    expect((await env.app.retention.runOnce()).bodies).toBe(0);
    expect(await row(queued)).toMatchObject({ status: 'QUEUED', text_body: 'hello' });
    // Once final, the next pass comes back to it although its walk has moved on.
    await send(live, 2);
    env.clock.advance(40 * DAY);
    await env.query("UPDATE emails SET status = 'DELIVERED' WHERE id = ?", queued);
    expect((await env.app.retention.runOnce()).bodies).toBe(1);
    expect(await row(queued)).toMatchObject({ status: 'DELIVERED', text_body: null });
  });
});

describe('email retention', () => {
  const stats = async () =>
    Number((await env.query<{ n: number }>("SELECT sum(count) AS n FROM email_stats WHERE type = 'simulated'"))[0]!.n);

  it('deletes final emails older than 90 days with their recipients and events, and keeps the hourly stats', async () => {
    env = await createTestEnv();
    const key = await env.key();
    const old: string[] = [];
    for (let i = 0; i < 250; i++) old.push(await send(key, i, { tags: ['old'] }));
    env.clock.advance(60 * DAY);
    const recent = await send(key, 999);
    env.clock.advance(31 * DAY);
    expect(await stats()).toBe(251);
    expect(await count(env, 'email_tags', '1=1')).toBe(250);

    expect(await env.app.retention.runOnce()).toEqual({ bodies: 251, emails: 250, deliveries: 0, received: 0 });
    const auth = { authorization: `Bearer ${key}` };
    expect((await env.server.inject({ url: `/v1/emails/${old[0]}`, headers: auth })).statusCode).toBe(404);
    expect((await env.server.inject({ url: `/v1/emails/${recent}`, headers: auth })).statusCode).toBe(200);
    for (const table of ['emails', 'recipients', 'email_events', 'attachments', 'email_tags', 'email_bodies'])
      // The recent email has no tags, and its bodies and attachment went with the body retention.
      expect(await count(env, table, '1=1'), table).toBe(
        ['emails', 'recipients', 'email_events'].includes(table) ? 1 : 0,
      );
    // Stats and usage are counts kept apart from the emails.
    expect(await stats()).toBe(251);
    expect((await env.app.retention.runOnce()).emails).toBe(0);
  });

  it('deletes webhook attempt records older than the email retention', async () => {
    env = await createTestEnv({ emailRetention: '30d' });
    await env.query(
      `INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
       VALUES ('w1', ?, 'https://hooks.example.com/x', '["*"]', 'whsec_x', '2026-03-15', '2026-03-15')`,
      env.init.project_id,
    );
    const record = (id: string) =>
      env.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, request_body, created_at)
         VALUES (?, 'w1', 'e', 'email.sent', 1, 'succeeded', '{}', ?)`,
        id,
        new Date(env.clock.now()).toISOString(),
      );
    for (let i = 0; i < 450; i++) await record(`old${i}`);
    env.clock.advance(31 * DAY);
    await record('new');
    expect((await env.app.retention.runOnce()).deliveries).toBe(450);
    expect(await env.query('SELECT id FROM webhook_deliveries')).toEqual([{ id: 'new' }]);
  });

  it('is off with `off`, and may not be shorter than the body retention', async () => {
    env = await createTestEnv({ emailRetention: 'off' });
    const key = await env.key();
    await send(key, 1);
    env.clock.advance(3650 * DAY);
    expect(await env.app.retention.runOnce()).toEqual({ bodies: 1, emails: 0, deliveries: 0, received: 0 });
    await expect(createTestEnv({ emailRetention: '1d', bodyRetention: '2d' })).rejects.toThrow(
      'invalid setting --email-retention: shorter than --body-retention; make it longer, or off',
    );
    await expect(createTestEnv({ emailRetention: '5m' })).rejects.toThrow(/--email-retention.*at least 10m, or off/);
  });
});
