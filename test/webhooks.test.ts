import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureLogger } from './domains-helpers.ts';
import { count, createTestEnv, testStore, type TestEnv } from './harness.ts';
import { caller, codeOf, login, MEMBER_PASSWORD, signInMembers } from './management-helpers.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';
import { createAuditWriter } from '../src/audit/index.ts';
import { createDnsResolver } from '../src/lib/dns.ts';
import { createCommitter } from '../src/store/committer.ts';
import { createWebhookDispatcher } from '../src/webhooks/dispatcher.ts';
import { createWebhooksRepo } from '../src/webhooks/repo.ts';
import { createWebhookAgent, resolverFromDns } from '../src/webhooks/url-guard.ts';

// Webhooks (contract "Webhooks (push)", "Webhook (management)"; decisions.md "Webhooks"):
// subscriptions over HTTP, the outbox written with the event, signed POSTs to a real HTTPS
// receiver, retries on the injected clock, deactivation, delivery records, redelivery.

let env: TestEnv;
let dns: DnsServer;
let receiver: WebhookReceiver;
let tokens: Record<string, string> = {};
let logs: Record<string, unknown>[] = [];
afterEach(async () => {
  await env.close();
  await dns.close();
  await receiver.close();
});

/** An env whose webhooks may reach the loopback receiver (--allow-insecure-webhooks), or not. */
async function setup(opts: { insecure?: boolean; schedule?: string; plan?: 'FREE' | 'UNLIMITED' } = {}) {
  const captured = captureLogger();
  logs = captured.lines;
  receiver = await startWebhookReceiver();
  dns = await startDnsServer();
  dns.set('hook.test', { A: ['127.0.0.1'] });
  dns.set('private.hook.test', { A: ['10.0.0.8'] });
  env = await createTestEnv(
    {
      dnsServers: dns.server,
      allowInsecureWebhooks: opts.insecure ?? true,
      ...(opts.schedule ? { webhookRetrySchedule: opts.schedule } : {}),
    },
    opts.plan ?? 'UNLIMITED',
    { webhookCa: [receiver.ca], logger: captured.logger },
  );
  tokens = await signInMembers(env, ['DEVELOPER', 'VIEWER']);
}

const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => env, tokens)(...args);
const W = () => `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}/webhooks`;
const hookUrl = (path = '/hooks') => `https://hook.test:${receiver.port}${path}`;

async function subscribe(events: string[] = ['*'], url = hookUrl()) {
  const res = await call('POST', W(), 'DEVELOPER', { url, events });
  expect(res.statusCode).toBe(201);
  return res.json<{ data: { id: string; secret: string } }>().data;
}

async function sendTest(subject = 'Hello'): Promise<string> {
  const res = await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${await env.key()}` },
    payload: { from: 'a@example.com', to: ['b@example.net'], subject, text: 'Hi', tags: ['welcome'] },
  });
  expect(res.statusCode).toBe(202);
  return res.json<{ data: { id: string } }>().data.id;
}

const dispatch = () => env.app.webhookDispatcher().runOnce();
const deliveries = async (id: string, q = '') =>
  (await call('GET', `${W()}/${id}/deliveries${q}`, 'VIEWER')).json<{ data: Record<string, unknown>[] }>().data;

describe('webhook subscriptions', () => {
  it('create shows the secret once; list and get never; patch, rotate and delete; roles hold', async () => {
    await setup();
    expect((await call('POST', W(), 'VIEWER', { url: hookUrl(), events: ['*'] })).statusCode).toBe(403);
    const created = await subscribe(['delivered', 'bounced', 'delivered']);
    expect(created.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const got = (await call('GET', `${W()}/${created.id}`, 'VIEWER')).json().data;
    expect(got).toMatchObject({ events: ['delivered', 'bounced'], is_active: true, auto_disabled: false });
    expect(got.secret).toBeUndefined();
    expect((await call('GET', W(), 'VIEWER')).json().data[0].secret).toBeUndefined();
    const patched = await call('PATCH', `${W()}/${created.id}`, 'DEVELOPER', { events: ['sent'] });
    expect(patched.json().data).toMatchObject({ events: ['sent'], url: hookUrl() });
    const rotated = await call('POST', `${W()}/${created.id}/rotate-secret`, 'DEVELOPER');
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().data.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(rotated.json().data.secret).not.toBe(created.secret);
    expect(JSON.stringify(await env.query('SELECT before, after FROM audit_logs'))).not.toMatch(/whsec_/);
    expect((await call('DELETE', `${W()}/${created.id}`, 'DEVELOPER')).statusCode).toBe(204);
    expect((await call('GET', `${W()}/${created.id}`, 'VIEWER')).statusCode).toBe(404);
  });

  it('refuses bad events, a plain-http or private URL without the development flag, and the plan ceiling', async () => {
    await setup({ insecure: false, plan: 'FREE' });
    for (const body of [
      { url: 'https://example.com/h', events: [] },
      { url: 'https://example.com/h', events: ['nope'] },
      { url: 'https://example.com/h', events: Array(21).fill('sent') },
      { url: 'http://example.com/h', events: ['*'] },
      { url: 'https://10.0.0.1/h', events: ['*'] },
      { url: 'https://[::ffff:127.0.0.1]/h', events: ['*'] },
      { url: 'https://user:pw@example.com/h', events: ['*'] },
    ]) {
      const r = await call('POST', W(), 'DEVELOPER', body);
      expect([JSON.stringify(body).slice(0, 60), r.statusCode, codeOf(r)]).toEqual([
        JSON.stringify(body).slice(0, 60),
        422,
        'request_validation_failed',
      ]);
    }
    for (let i = 0; i < 3; i++) await subscribe(['sent'], `https://example.com/h${i}`);
    const fourth = await call('POST', W(), 'DEVELOPER', { url: 'https://example.com/h4', events: ['sent'] });
    expect([fourth.statusCode, codeOf(fourth)]).toEqual([422, 'plan_limit_exceeded']);
  });
});

describe('delivering events', () => {
  it('queues every subscribable event type for a * webhook, and neither smtp_connected nor an unsubscribed type', async () => {
    await setup();
    const all = await subscribe(['*']);
    const some = await subscribe(['delivered', 'opened']);
    const emailId = await sendTest();
    const [{ seq }] = (await env.query<{ seq: number }>('SELECT seq FROM emails WHERE id = ?', emailId)) as [
      { seq: number },
    ];
    const types = ['queued', 'sending', 'smtp_connected', 'sent', 'delivered', 'bounced', 'complained', 'failed'];
    for (const [i, type] of [...types, 'opened', 'clicked'].entries()) {
      await env.query(
        "INSERT INTO email_events (id, email_seq, type, created_at) VALUES (?, ?, ?, '2026-03-15T12:30:00.000Z')",
        `written-elsewhere-${i}`,
        seq,
        type,
      );
    }
    const queued = async (id: string) =>
      (
        await env.query<{ event_type: string }>(
          'SELECT event_type FROM webhook_outbox WHERE webhook_id = ? ORDER BY seq',
          id,
        )
      ).map((r) => r.event_type);
    expect(await queued(all.id)).toEqual([
      'simulated',
      ...types.filter((t) => t !== 'smtp_connected'),
      'opened',
      'clicked',
    ]);
    expect(await queued(some.id)).toEqual(['delivered', 'opened']);
  });

  it('writes the outbox with the event and POSTs the contract body, signed over t.body', async () => {
    await setup();
    const hook = await subscribe(['simulated']);
    const other = await subscribe(['delivered']);
    const emailId = await sendTest();
    // The outbox row is written in the send's own transaction; nothing has been sent yet.
    expect(await count(env, 'webhook_outbox')).toBe(1);
    expect(receiver.requests).toHaveLength(0);
    // The body is built when the row is sent, but tells the email's status when the event happened.
    await env.query("UPDATE emails SET status = 'DELIVERED' WHERE id = ?", emailId);
    await dispatch();
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Service-Webhook/1.0');
    const body = JSON.parse(req.body);
    // The header is the event's uuid; the body's id is `evt_` and the same uuid (contract).
    expect(req.headers['x-service-event-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(body.id).toBe(`evt_${String(req.headers['x-service-event-id'])}`);
    const [events] = await env.query<{ n: number }>(
      'SELECT count(*) AS n FROM email_events WHERE id = ?',
      String(req.headers['x-service-event-id']),
    );
    expect(Number(events!.n)).toBe(1);
    expect(body).toMatchObject({
      type: 'email.simulated',
      data: {
        email: {
          id: emailId,
          from: 'a@example.com',
          to: ['b@example.net'],
          subject: 'Hello',
          tags: ['welcome'],
          status: 'SIMULATED',
        },
        event: {},
      },
    });
    expect(body.id).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-service-signature']))!;
    expect(Number(t)).toBe(Math.floor(env.clock.now() / 1000));
    expect(v1).toBe(createHmac('sha256', hook.secret).update(`${t}.${req.body}`).digest('hex'));
    expect(await count(env, 'webhook_outbox')).toBe(0);
    const records = await deliveries(hook.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 'succeeded', attempt: 1, http_status: 200, request_body: req.body });
    expect(await deliveries(other.id)).toEqual([]);
  });

  it('retries 1 m, 5 m, 30 m, 2 h with the same event id, then stops; responses cut at 4 KiB and scrubbed', async () => {
    await setup();
    const hook = await subscribe();
    receiver.respond = () => ({
      status: 500,
      body: `Authorization: Bearer abcdefghijklmnop whsec_${'a'.repeat(64)} https://bob:hunter2@x.test/ ${'x'.repeat(9000)}`,
    });
    await sendTest();
    for (const wait of [0, 60_000, 300_000, 1_800_000, 7_200_000]) {
      // A retry sends its first attempt's bytes, whatever became of the email since.
      if (wait === 60_000) await env.query("UPDATE emails SET status = 'DELIVERED'");
      env.clock.advance(wait - 1);
      await dispatch(); // not due yet
      env.clock.advance(1);
      await dispatch();
    }
    expect(receiver.requests).toHaveLength(5);
    expect(new Set(receiver.requests.map((r) => r.headers['x-service-event-id'])).size).toBe(1);
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
    env.clock.advance(86_400_000);
    await dispatch();
    expect(receiver.requests).toHaveLength(5);
    // A day later the session has long expired: sign in again.
    tokens.VIEWER = await login(env, 'viewer@example.com', MEMBER_PASSWORD);
    const records = await deliveries(hook.id);
    expect(records.map((r) => r.attempt)).toEqual([5, 4, 3, 2, 1]);
    expect(records.map((r) => r.status)).toEqual(Array(5).fill('failed'));
    expect(records[0]!.next_attempt_at).toBeNull();
    expect(records[4]!.next_attempt_at).not.toBeNull();
    const stored = String(records[0]!.response_body);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(4096);
    expect(stored).not.toMatch(/abcdefghijklmnop|whsec_a{8}|hunter2/);
    expect(await deliveries(hook.id, '?status=succeeded')).toEqual([]);
    expect(await deliveries(hook.id, '?limit=2&offset=1')).toHaveLength(2);
  });

  it('five exhausted events in a row deactivate the webhook; later events are skipped; PATCH reactivates', async () => {
    await setup({ schedule: '1s' });
    const hook = await subscribe();
    receiver.respond = () => ({ status: 503 });
    for (let i = 0; i < 5; i++) await sendTest(`n${i}`);
    await dispatch();
    env.clock.advance(1000);
    await dispatch();
    expect(receiver.requests).toHaveLength(10);
    const off = (await call('GET', `${W()}/${hook.id}`, 'VIEWER')).json().data;
    expect(off).toMatchObject({ is_active: false, auto_disabled: true });
    // Logs name the webhook (each failed attempt, the deactivation), never its secret.
    expect(logs.filter((l) => l.webhook_id === hook.id).length).toBeGreaterThanOrEqual(11);
    expect(logs.some((l) => String(l.msg).startsWith('webhook deactivated'))).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(hook.secret);
    expect(JSON.stringify(logs)).not.toMatch(/whsec_/);
    const metrics = (await env.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^svc_webhooks_auto_disabled 1$/m);
    expect(metrics).toMatch(/^svc_webhook_attempts_total\{outcome="failed"\} 10$/m);
    await sendTest('while off');
    // Reactivated before the dispatcher took that event: it happened while off, so it stays skipped.
    const on = await call('PATCH', `${W()}/${hook.id}`, 'DEVELOPER', { is_active: true });
    expect(on.json().data).toMatchObject({ is_active: true, auto_disabled: false });
    receiver.respond = () => ({ status: 204 });
    await dispatch();
    expect(receiver.requests).toHaveLength(10);
    const skipped = await deliveries(hook.id, '?status=skipped');
    expect(skipped).toHaveLength(1);
    expect(JSON.parse(String(skipped[0]!.request_body))).toMatchObject({ type: 'email.simulated' });
    await sendTest('back on');
    await dispatch();
    expect(receiver.requests).toHaveLength(11);
  });

  it('test sends a signed test.ping; redeliver adds an attempt, 10 a minute', async () => {
    await setup();
    const hook = await subscribe();
    const ping = await call('POST', `${W()}/${hook.id}/test`, 'DEVELOPER');
    expect(ping.json().data).toEqual({ success: true, http_status: 200, error: null });
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ id: 'evt_test_ping', type: 'test.ping' });
    receiver.respond = () => ({ status: 500 });
    const failed = (await call('POST', `${W()}/${hook.id}/test`, 'DEVELOPER')).json().data;
    expect(failed).toMatchObject({ success: false, http_status: 500 });
    // Each ping is an event of its own (decisions.md): a fresh uuid in the header every time.
    const pings = receiver.requests.map((r) => String(r.headers['x-service-event-id']));
    expect(pings.every((id) => /^[0-9a-f-]{36}$/.test(id))).toBe(true);
    expect(new Set(pings).size).toBe(2);

    receiver.respond = () => ({ status: 200 });
    await sendTest();
    await dispatch();
    const [first] = await deliveries(hook.id);
    const again = await call('POST', `${W()}/${hook.id}/deliveries/${String(first!.id)}/redeliver`, 'DEVELOPER');
    expect(again.statusCode).toBe(202);
    await dispatch();
    const records = await deliveries(hook.id);
    expect(records).toHaveLength(2);
    expect(records[0]!.event_id).toBe(first!.event_id);
    expect(records[1]).toEqual(first); // history is not rewritten
    const one = await call('GET', `${W()}/${hook.id}/deliveries/${String(first!.id)}`, 'VIEWER');
    expect(one.json().data).toEqual(first);
    for (let i = 0; i < 9; i++) {
      expect(
        (await call('POST', `${W()}/${hook.id}/deliveries/${String(first!.id)}/redeliver`, 'DEVELOPER')).statusCode,
      ).toBe(202);
    }
    const limited = await call('POST', `${W()}/${hook.id}/deliveries/${String(first!.id)}/redeliver`, 'DEVELOPER');
    expect([limited.statusCode, codeOf(limited)]).toEqual([429, 'rate_limited']);
  });

  it('refuses at the attempt a name that resolves to a private address: nothing reaches it', async () => {
    await setup({ insecure: false });
    const hook = await subscribe(['*'], `https://private.hook.test:${receiver.port}/hooks`);
    await sendTest();
    await dispatch();
    expect(receiver.requests).toHaveLength(0);
    const [record] = await deliveries(hook.id);
    expect(record).toMatchObject({ status: 'failed', http_status: null });
    expect(String(record!.error)).toMatch(/refused/);
    expect(env.app.webhookDispatcher().stats.attempts.refused).toBe(1);
    const metrics = (await env.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^svc_webhook_attempts_total\{outcome="refused"\} 1$/m);
    expect(metrics).toMatch(/^svc_webhook_events_pending 1$/m); // its retry
  });
});

// SQLite's dispatcher thread yields to the accept's writes; PostgreSQL has no single writer to yield to.
describe.skipIf(testStore() === 'postgres')('the dispatcher while the accept is busy', () => {
  /** A dispatcher on a connection of its own, as in the dispatch thread, with `deps` added. */
  function threadDispatcher(deps: { busy?: () => boolean; durable?: () => Promise<void> }) {
    const db = env.app.db;
    const repo = createWebhooksRepo(db, createCommitter(db), createAuditWriter(db));
    const agent = createWebhookAgent({
      resolve: resolverFromDns(createDnsResolver([dns.server])),
      allowInsecure: true,
      ca: [receiver.ca],
    });
    const opts = { retrySchedule: [60_000], allowInsecure: true, tickMs: 100, concurrency: 8, maxLagMs: 30_000 };
    const d = createWebhookDispatcher({ repo, clock: env.clock, logger: captureLogger().logger, agent, ...deps }, opts);
    return { d, agent };
  }

  it('holds new events back until the accept is free, or until the oldest has waited maxLagMs', async () => {
    await setup();
    await subscribe(['simulated']);
    let busy = true;
    const { d, agent } = threadDispatcher({ busy: () => busy });
    try {
      await sendTest('one');
      await sendTest('two');
      await d.runOnce();
      expect(receiver.requests).toHaveLength(0);
      env.clock.advance(29_999);
      await d.runOnce();
      expect(receiver.requests).toHaveLength(0);
      // The oldest has waited 30 s: the accept being busy no longer holds the webhooks back.
      env.clock.advance(1);
      await d.runOnce();
      expect(receiver.requests).toHaveLength(2);

      await sendTest('three');
      await d.runOnce();
      expect(receiver.requests).toHaveLength(2);
      busy = false;
      await d.runOnce();
      expect(receiver.requests).toHaveLength(3);
      expect(await count(env, 'webhook_outbox')).toBe(0);
    } finally {
      await d.stop();
      await agent.destroy();
    }
  });

  // The dispatch thread reads what the main thread committed, which is synced a moment after its
  // COMMIT (store/wal-sync.ts): an event is never POSTed before it is on disk.
  it('posts nothing it claimed until what it read is on disk', async () => {
    await setup();
    await subscribe(['simulated']);
    let synced!: () => void;
    let asked = 0;
    const durable = () => {
      asked++;
      return new Promise<void>((resolve) => (synced = resolve));
    };
    const { d, agent } = threadDispatcher({ durable });
    try {
      await sendTest('one');
      const run = d.runOnce();
      await vi.waitFor(() => expect(asked).toBe(1));
      // Claimed, waiting for the disk: nothing on the wire yet.
      await new Promise((r) => setTimeout(r, 50));
      expect(receiver.requests).toHaveLength(0);
      synced();
      await run;
      await vi.waitFor(() => expect(receiver.requests).toHaveLength(1));
    } finally {
      await d.stop();
      await agent.destroy();
    }
  });
});
