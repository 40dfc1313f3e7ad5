import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, type DeliveryEnv } from './delivery-helpers.ts';
import { sleep } from '../src/lib/sleep.ts';
import { startBadMx } from './peers/bad-mx.ts';

let dns: DnsServer;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
});
afterAll(async () => {
  for (const c of closers.reverse()) await c();
  await dns.close();
});

async function peer(opts: Parameters<typeof startMxPeer>[0] = {}): Promise<MxPeer> {
  const p = await startMxPeer(opts);
  closers.push(() => p.close());
  return p;
}

async function env(settings: Parameters<typeof startDeliveryEnv>[1]): Promise<DeliveryEnv> {
  const e = await startDeliveryEnv(dns, settings);
  closers.push(() => e.env.close());
  return e;
}

describe('STARTTLS with a self-signed certificate', () => {
  let tlsPeer: MxPeer;
  beforeAll(async () => {
    const pems = await selfsigned.generate([{ name: 'commonName', value: 'mx.dest.test' }], { keySize: 2048 });
    tlsPeer = await peer({ tls: { key: pems.private, cert: pems.cert } });
  });

  it('is used and accepted with --smtp-tls-insecure', async () => {
    const d = await env({ mxPort: String(tlsPeer.port), smtpTlsInsecure: true });
    const id = await d.send(['tls@dest.test']);
    await settle(d.env);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect((await d.events(id)).find((e) => e.type === 'smtp_connected')).toMatchObject({
      tls: true,
      tls_version: expect.stringMatching(/^TLSv1\.[23]$/),
    });
    expect(tlsPeer.received.at(-1)!.secure).toBe(true);
  });

  it('is refused by default and retried with the reason', async () => {
    const d = await env({ mxPort: String(tlsPeer.port) });
    const id = await d.send(['tls2@dest.test']);
    await settle(d.env);
    expect((await d.recipients(id))[0]).toMatchObject({ status: 'QUEUED', bounce_category: 'connection-error' });
    expect((await d.recipients(id))[0]!.last_error).toMatch(/certificate/i);
  });
});

describe('smarthost mode', () => {
  it('sends all LIVE mail through the relay, authenticated, with no MX lookup', async () => {
    const relay = await peer({ auth: { user: 'relay-user', pass: 's3cret' } });
    const d = await env({ relay: `smtp://relay-user:s3cret@127.0.0.1:${relay.port}` });
    const id = await d.send(['someone@nowhere-in-dns.test', 'other@dest.test']);
    await settle(d.env);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(relay.received.flatMap((m) => m.to).sort()).toEqual(['other@dest.test', 'someone@nowhere-in-dns.test']);
  });

  it('retries, and suppresses nobody, when the relay refuses our credentials', async () => {
    const relay = await peer({ auth: { user: 'relay-user', pass: 's3cret' } });
    const d = await env({ relay: `smtp://relay-user:wrong@127.0.0.1:${relay.port}` });
    const id = await d.send(['someone@dest.test']);
    await settle(d.env);
    expect((await d.recipients(id))[0]).toMatchObject({ status: 'QUEUED' });
    expect((await d.recipients(id))[0]!.last_error).toMatch(/535|auth/i);
    expect(relay.received).toHaveLength(0);
  });
});

describe('per-destination concurrency', () => {
  it('never has more transactions in flight to one destination than --delivery-concurrency, even in one pick', async () => {
    // All twelve are due before the first pick, and one thread takes 16 transactions at once.
    const slow = await peer({ dataDelayMs: 150 });
    const d = await env({ mxPort: String(slow.port), deliveryConcurrency: '3' });
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await d.send([`user${i}@dest.test`]));
    await settle(d.env);
    expect(await Promise.all(ids.map(async (id) => (await d.email(id)).status))).toEqual(ids.map(() => 'DELIVERED'));
    expect(slow.received).toHaveLength(12);
    expect(slow.peakInData()).toBe(3);
  });
});

/** One batch request: its emails are committed together, so one pick sees them all. */
async function sendBatch(d: DeliveryEnv, recipients: string[]): Promise<string[]> {
  const res = await d.env.server.inject({
    method: 'POST',
    url: '/v1/emails/batch',
    headers: { authorization: `Bearer ${d.key}` },
    payload: { emails: recipients.map((to) => ({ from: 'news@sender.test', to: [to], subject: 'Hello', text: 'Hi' })) },
  });
  expect(res.statusCode).toBe(202);
  return (res.json().data.results as { id: string }[]).map((r) => r.id);
}

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await sleep(25);
  if (!(await check())) throw new Error(`timed out waiting for ${what}`);
}

describe('claims run ahead of the slots', () => {
  it('gives the claimed transactions waiting for a slot back to the queue when their destination says slow down', async () => {
    const mx = await peer();
    mx.behaviour.set('busy@dest.test', { rcpt: [421, '4.7.0 Too many connections, slow down'] });
    const d = await env({ mxPort: String(mx.port), deliveryConcurrency: '1' });
    // One slot: the pick claims `busy` and, one round ahead, `waits`, which waits for the slot.
    const [busy, waits, later] = await sendBatch(d, ['busy@dest.test', 'waits@dest.test', 'later@dest.test']);
    const engine = d.env.app.delivery();
    await engine.poke();
    await until('the 421 to be recorded', async () => (await d.recipients(busy!))[0]!.last_error !== null);
    await until('the waiting claim to go back', () => engine.inflightCount() === 0);
    expect((await d.recipients(waits!))[0]).toMatchObject({ status: 'QUEUED', attempts: 0, lease_until: null });
    expect((await d.events(waits!)).map((e) => e.type)).toEqual(['queued', 'sending']);
    expect((await d.recipients(later!))[0]).toMatchObject({ status: 'QUEUED', attempts: 0 });
    expect(engine.throttle.describe('dest.test', d.env.clock.now()).paused_until).not.toBeNull();
    // While the destination is paused nothing is claimed for it.
    await engine.poke();
    expect(engine.inflightCount()).toBe(0);
    expect(mx.received).toHaveLength(0);
    mx.behaviour.delete('busy@dest.test');
    d.env.clock.advance(10 * 60_000);
    await settle(d.env);
    expect(await Promise.all([busy, waits, later].map(async (id) => (await d.email(id!)).status))).toEqual([
      'DELIVERED',
      'DELIVERED',
      'DELIVERED',
    ]);
    expect((await d.recipients(waits!))[0]!.attempts).toBe(1);
  });
});

describe('shutdown and the queue', () => {
  it('returns work in flight to the queue when stopped before it finishes', async () => {
    const slow = await peer({ dataDelayMs: 1500 });
    const d = await env({ mxPort: String(slow.port) });
    const id = await d.send(['slow@dest.test']);
    const engine = d.env.app.delivery();
    await engine.poke();
    await until('the transaction to start', () => engine.inflightCount() > 0);
    expect(engine.inflightCount()).toBe(1);
    await engine.stop(50);
    expect((await d.recipients(id))[0]).toMatchObject({ status: 'QUEUED', lease_until: null, attempts: 0 });
  });

  it('does not claim a transaction again while it runs past its lease', async () => {
    const slow = await peer({ dataDelayMs: 700 });
    const d = await env({ mxPort: String(slow.port) });
    const id = await d.send(['slow@dest.test']);
    const engine = d.env.app.delivery();
    await engine.poke();
    await until('the transaction to start', () => engine.inflightCount() === 1);
    d.env.clock.advance(11 * 60_000); // past the 10-minute lease
    await engine.poke();
    await settle(d.env);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(slow.received).toHaveLength(1);
    expect((await d.recipients(id))[0]!.attempts).toBe(1);
  });

  it('returns claimed transactions that were still waiting for a slot at once', async () => {
    const slow = await peer({ dataDelayMs: 1500 });
    const d = await env({ mxPort: String(slow.port), deliveryConcurrency: '1' });
    const [running, waiting] = await sendBatch(d, ['first@dest.test', 'second@dest.test']);
    const engine = d.env.app.delivery();
    await engine.poke();
    await until('both to be claimed', () => engine.inflightCount() === 2);
    // The running one gets until the deadline; the waiting one goes back before that.
    const stopped = engine.stop(10_000);
    await until('the waiting one to go back', async () => (await d.recipients(waiting!))[0]!.status === 'QUEUED');
    expect((await d.recipients(waiting!))[0]).toMatchObject({ lease_until: null, attempts: 0 });
    expect((await d.recipients(running!))[0]).toMatchObject({ status: 'SENDING' });
    await stopped;
    expect((await d.email(running!)).status).toBe('DELIVERED');
  });

  it('explains why an email waits: attempts, next attempt, last reply, throttled destination', async () => {
    const mx = await peer();
    const d = await env({ mxPort: String(mx.port) });
    mx.behaviour.set('busy@dest.test', { rcpt: [421, '4.7.0 Too many connections, slow down'] });
    const id = await d.send(['busy@dest.test']);
    await settle(d.env);
    const [q] = await d.env.app.explainQueue(id);
    expect(q).toMatchObject({
      address: 'busy@dest.test',
      status: 'QUEUED',
      attempts: 1,
      domain: 'dest.test',
      throttle_concurrency: 10,
    });
    expect(q!.next_attempt_at).toBe(new Date(d.env.clock.now() + 60_000).toISOString());
    expect(q!.last_error).toMatch(/^421 4\.7\.0 Too many connections/);
    expect(q!.throttle_reason).toMatch(/Too many connections/);
    mx.behaviour.delete('busy@dest.test');
    d.env.clock.advance(60 * 60_000);
    await settle(d.env);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect((await d.events(id)).filter((e) => e.type === 'sending').at(-1)).toMatchObject({
      attempt: 2,
      previous_attempt: expect.stringMatching(/^421/),
    });
  });
});

describe('faults of the peer', () => {
  it.each([
    ['hang', /timeout|timed out/i],
    // nodemailer waits for a reply line it can read, so garbage ends in the session timeout.
    ['garbage', /timeout/i],
    ['truncated', /closed|ended|unexpected/i],
  ] as const)('a peer that does %s gets a retry with the reason, never a crash', async (mode, reason) => {
    const bad = await startBadMx(mode);
    closers.push(() => bad.close());
    const d = await env({ mxPort: String(bad.port), deliveryConnectTimeout: '300ms', deliveryTimeout: '300ms' });
    const id = await d.send([`${mode}@dest.test`]);
    await settle(d.env);
    const r = (await d.recipients(id))[0]!;
    expect(r).toMatchObject({ status: 'QUEUED', attempts: 1, bounce_category: 'connection-error' });
    expect(r.last_error).toMatch(reason);
    expect(r.last_error).toContain(`mx.dest.test [127.0.0.1]:${bad.port}`);
    expect(Date.parse(r.next_attempt_at)).toBe(d.env.clock.now() + 60_000);
  });
});
