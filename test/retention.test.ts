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

const row = (id: string) =>
  env.app.db.prepare('SELECT seq, html_body, text_body, status FROM emails WHERE id = ?').get(id) as {
    seq: number;
    html_body: string | null;
    text_body: string | null;
    status: string;
  };

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
    expect(dropped).toBe(450);
    for (const id of [old[0]!, old[449]!]) {
      expect(row(id)).toMatchObject({ html_body: null, text_body: null, status: 'SIMULATED' });
      expect(count(env, 'attachments', 'email_seq = ?', row(id).seq)).toBe(0);
      expect(count(env, 'email_events', 'email_seq = ?', row(id).seq)).toBe(1);
      expect(count(env, 'recipients', 'email_seq = ?', row(id).seq)).toBe(1);
    }
    expect(row(recent)).toMatchObject({ html_body: '<p>hello</p>', text_body: 'hello' });
    expect(count(env, 'attachments', 'email_seq = ?', row(recent).seq)).toBe(1);

    // The API still shows the email, with no bodies.
    const res = await env.server.inject({ url: `/v1/emails/${old[0]}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: old[0], subject: 'n0', html_body: null, text_body: null });
    // A second pass has nothing left to drop.
    expect(await env.app.retention.runOnce()).toBe(0);
  });

  it('keeps the bodies of an old email that is still being delivered', async () => {
    env = await createTestEnv();
    verifyDomain(env, 'example.com');
    const live = await env.key({ env: 'LIVE' });
    const queued = await send(live, 1);
    env.clock.advance(40 * DAY);
    expect(await env.app.retention.runOnce()).toBe(0);
    expect(row(queued)).toMatchObject({ status: 'QUEUED', text_body: 'hello' });
  });
});
