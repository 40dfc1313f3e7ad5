import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';
import {
  headOf,
  oneClick as postOneClick,
  suppressed as suppressedIn,
  unsubscribedEvents as unsubscribedEventsOf,
} from './unsubscribe-helpers.ts';
import { listenInbound, receivedFor, startDeliveryEnv, verifyDkim, type DeliveryEnv } from './delivery-helpers.ts';
import type { InboundListener } from '../src/smtp/index.ts';

// One-click unsubscribe's webhook and its mailto (RFC 8058, RFC 2369; issue 32, item 4): an
// unsubscribe fires `email.unsubscribed` once to a real HTTPS receiver, by the URL's POST or by
// a message a mail client sends to the mailto on the inbound listener (real sockets, nodemailer).

const PUBLIC = 'https://mail.svc.test';
let dns: DnsServer;
let mx: MxPeer;
let hooks: WebhookReceiver;
let d: DeliveryEnv;
let inbound: InboundListener;
let inboundPort: number;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  hooks = await startWebhookReceiver();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  dns.set('hook.test', { A: ['127.0.0.1'] });
  d = await startDeliveryEnv(
    dns,
    {
      mxPort: String(mx.port),
      publicUrl: PUBLIC,
      allowInsecureWebhooks: true,
      // Says the inbound MX is on (List-Unsubscribe then has a mailto); nothing listens on it:
      // the test's own listener below takes the mail on a port of its own.
      inboundPort: '2525',
    },
    undefined,
    { webhookCa: [hooks.ca] },
  );
  ({ inbound, port: inboundPort } = await listenInbound(d.env));
  await d.env.app.accounts.updateProjectSettings(d.env.init.project_id, { one_click_unsubscribe: true });
  await d.env.app.webhooks.create(d.env.init.project_id, {
    url: `https://hook.test:${hooks.port}/hooks`,
    events: ['unsubscribed'],
  });
});

afterAll(async () => {
  await inbound.close();
  await d.env.close();
  await hooks.close();
  await mx.close();
  await dns.close();
});

let n = 0;

/** Sends to a fresh address; its List-Unsubscribe as delivered, the URL's token and the mailto address. */
async function delivered(to = `reader${++n}@dest.test`) {
  const id = await d.send([to]);
  const m = await receivedFor(d.env, mx, to);
  const list = headOf(m.raw)('List-Unsubscribe') ?? '';
  const [, token = '', mailto = ''] = /^<https:\/\/mail\.svc\.test\/u\/([\w-]+)>, <mailto:([^>]+)>$/.exec(list) ?? [];
  return { id, to, raw: m.raw, list, token, mailto };
}

const oneClick = (token: string) => postOneClick(d.env, token);
const suppressed = (email: string) => suppressedIn(d.env, email);
const unsubscribedEvents = (id: string) => unsubscribedEventsOf(d.env, id);

/** A mail client's unsubscribe message (RFC 2369 mailto), through the inbound listener; its outcome. */
async function mailTo(address: string): Promise<{ ok: boolean; reply: string }> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: inboundPort,
    secure: false,
    ignoreTLS: true,
  });
  try {
    const info = await transport.sendMail({ from: 'reader@dest.test', to: address, subject: 'unsubscribe', text: '' });
    return { ok: true, reply: info.response };
  } catch (e) {
    return { ok: false, reply: (e as { response?: string }).response ?? String(e) };
  } finally {
    transport.close();
  }
}

/** The webhook bodies received for the email, after the dispatcher has taken every due row. */
async function hooksFor(id: string) {
  await d.env.app.webhookDispatcher().runOnce();
  return hooks.requests
    .map((r) => JSON.parse(r.body) as { type: string; data: { email: { id: string }; event: unknown } })
    .filter((b) => b.data.email.id === id);
}

describe('the unsubscribe webhook', () => {
  it('fires email.unsubscribed once on the POST, with the recipient and its suppression; a replay fires none', async () => {
    const m = await delivered();
    expect(m.token).not.toBe('');
    expect((await oneClick(m.token)).statusCode).toBe(200);
    const first = await hooksFor(m.id);
    expect(first).toEqual([
      expect.objectContaining({
        type: 'email.unsubscribed',
        data: expect.objectContaining({
          event: { recipient: m.to, suppression_reason: 'UNSUBSCRIBE', via: 'one-click' },
        }),
      }),
    ]);
    expect((await oneClick(m.token)).statusCode).toBe(200);
    expect(await hooksFor(m.id)).toHaveLength(1);
    expect(await unsubscribedEvents(m.id)).toBe(1);
  });
});

describe('the mailto on the inbound listener', () => {
  it('is written beside the URL on the return-path domain, 64 octets at most before the @, under DKIM', async () => {
    const m = await delivered();
    expect(m.mailto).toMatch(/^unsubscribe\+[0-9a-f]{32}-[0-9a-f]{16}@bounces\.sender\.test$/);
    expect(m.mailto.split('@')[0]!.length).toBeLessThanOrEqual(64);
    expect((await verifyDkim(m.raw, dns)).status).toBe('pass');
  });

  it('refuses a forged tag, another email, and a bounce address used as one at RCPT with 550 5.1.1', async () => {
    const m = await delivered();
    const other = await delivered();
    const forged = m.mailto.replace(
      /-([0-9a-f]{16})@/,
      (_, tag: string) => `-${tag.startsWith('0') ? '1' : '0'}${tag.slice(1)}@`,
    );
    const moved = m.mailto.replace(/\+[0-9a-f]{32}-/, `+${other.id.replaceAll('-', '')}-`);
    const returnPath = mx.received.find((x) => x.to.includes(m.to))!.from;
    const asUnsubscribe = returnPath.replace(/^bounces\+([0-9a-f]{32})-([0-9a-f]{12})@/, 'unsubscribe+$1-$20000@');
    for (const bad of [forged, moved, asUnsubscribe]) {
      const r = await mailTo(bad);
      expect([bad, r.ok, r.reply]).toEqual([bad, false, expect.stringMatching(/^550 5\.1\.1 /)]);
    }
    expect(await suppressed(m.to)).toEqual([]);
    expect(await suppressed(other.to)).toEqual([]);
  });

  it('unsubscribes the recipient on a message from a mail client, like the POST: one event, one webhook', async () => {
    const m = await delivered();
    const r = await mailTo(m.mailto);
    expect(r).toMatchObject({ ok: true, reply: expect.stringMatching(/^250 /) });
    expect(await suppressed(m.to)).toEqual([{ reason: 'UNSUBSCRIBE', source_email_id: m.id }]);
    expect(await unsubscribedEvents(m.id)).toBe(1);
    const sent = await hooksFor(m.id);
    expect(sent.map((b) => [b.type, b.data.event])).toEqual([
      ['email.unsubscribed', { recipient: m.to, suppression_reason: 'UNSUBSCRIBE', via: 'mailto' }],
    ]);
    // A second message, or the URL after it, changes nothing more.
    expect((await mailTo(m.mailto)).ok).toBe(true);
    expect((await oneClick(m.token)).statusCode).toBe(200);
    expect(await unsubscribedEvents(m.id)).toBe(1);
    expect(await hooksFor(m.id)).toHaveLength(1);
  });
});
