import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, type DeliveryEnv } from './delivery-helpers.ts';

// Issue 26, item 8: an event's `data.email.status` is the email's status after the change
// that made the event (the status its transaction left), for every event type and writer:
// accept (queued, simulated), the claim (sending), outcomes (sent, delivered, bounced,
// failed), tracking (opened, clicked) and inbound reports (a late DSN bounce, a complaint).
// Real sends through the engine to a loopback MX, the bodies as a receiver gets them.

const PUBLIC = 'https://track.svc.test';

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let receiver: Server;
const bodies: Body[] = [];

interface Body {
  type: string;
  data: { email: { id: string; status: string }; event: { recipient?: string } };
}

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port), publicUrl: PUBLIC, allowInsecureWebhooks: true });
  const port = (receiver.address() as AddressInfo).port;
  await d.env.app.webhooks.create(d.env.init.project_id, { url: `http://127.0.0.1:${port}/in`, events: ['*'] });
});

afterAll(async () => {
  await d.env.close();
  await mx.close();
  await dns.close();
  await new Promise((resolve) => receiver.close(resolve));
});

/** Sends what is due to the receiver; then each webhook body of `emailId` as `type recipient: STATUS`. */
async function told(emailId: string): Promise<string[]> {
  await d.env.app.webhookDispatcher().runOnce();
  return bodies
    .filter((b) => b.data.email.id === emailId)
    .map((b) => `${b.type} ${b.data.event.recipient ?? '-'}: ${b.data.email.status}`)
    .sort();
}

/** The return path and HTML of the message the MX got for `to`. */
async function receivedBy(to: string): Promise<{ returnPath: string; html: string }> {
  const msg = mx.received.find((m) => m.to.includes(to))!;
  return { returnPath: msg.from, html: (await simpleParser(msg.raw)).html || '' };
}

/** A DSN (RFC 3464) saying the remote server gave up on `rcpt` with a 550 5.1.1. */
const dsn = (to: string, rcpt: string) =>
  [
    'From: MAILER-DAEMON@mx.dest.test',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
    '',
    '--B',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.dest.test',
    '',
    `Final-Recipient: rfc822; ${rcpt}`,
    'Action: failed',
    'Status: 5.1.1',
    'Diagnostic-Code: smtp; 550 5.1.1 No such user',
    '',
    '--B--',
    '',
  ].join('\r\n');

/** An ARF spam complaint (RFC 5965) about the message to `rcpt`. */
const arf = (to: string, rcpt: string) =>
  [
    'From: feedback@fbl.dest.test',
    `To: ${to}`,
    'Subject: FW: Hello',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="A"',
    '',
    '--A',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'Version: 1',
    `Original-Rcpt-To: <${rcpt}>`,
    '',
    '--A',
    'Content-Type: text/rfc822-headers',
    '',
    'From: news@sender.test',
    `To: ${rcpt}`,
    '',
    '--A--',
    '',
  ].join('\r\n');

describe("data.email.status is the status the event's change left", () => {
  it('simulated: SIMULATED', async () => {
    const key = await d.env.key({ env: 'TEST' });
    const res = await d.env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${key}` },
      payload: { from: 'news@sender.test', to: ['t@dest.test'], subject: 'S', text: 'T' },
    });
    expect(await told(res.json().data.id)).toEqual(['email.simulated -: SIMULATED']);
  });

  it('queued, sending, sent, delivered, opened, clicked, then a late DSN bounce of the one recipient', async () => {
    await d.env.app.accounts.updateProjectSettings(d.env.init.project_id, {
      click_tracking: true,
      open_tracking: true,
    });
    const to = 'reader@dest.test';
    const id = await d.send([to], { html: '<p>See <a href="https://shop.test/p">the shop</a></p>' });
    // The engine is running, so its claim (sending) may already be told: the queued event says QUEUED
    // either way, and the full list is checked below.
    expect((await told(id)).filter((t) => t.startsWith('email.queued '))).toEqual(['email.queued -: QUEUED']);
    await settle(d.env);
    const { returnPath, html } = await receivedBy(to);
    for (const kind of ['o', 'c']) {
      const token = new RegExp(`${PUBLIC}/t/${kind}/([A-Za-z0-9_-]+)`).exec(html)![1]!;
      const res = await d.env.server.inject({ method: 'GET', url: `/t/${kind}/${token}` });
      expect(res.statusCode).toBeLessThan(400);
    }
    const result = await d.env.app.inbound.process(Buffer.from(dsn(returnPath, to)), [returnPath]);
    expect(result.applied).toHaveLength(1);
    expect(await told(id)).toEqual([
      `email.bounced ${to}: BOUNCED`,
      'email.clicked -: DELIVERED',
      'email.delivered reader@dest.test: DELIVERED',
      'email.opened -: DELIVERED',
      'email.queued -: QUEUED',
      'email.sending reader@dest.test: SENDING',
      'email.sent reader@dest.test: DELIVERED',
    ]);
  });

  it('a single-recipient hard bounce: BOUNCED', async () => {
    mx.behaviour.set('dead@dest.test', { rcpt: [550, '5.1.1 No such user here'] });
    const id = await d.send(['dead@dest.test']);
    await settle(d.env);
    expect(await told(id)).toEqual([
      'email.bounced dead@dest.test: BOUNCED',
      'email.queued -: QUEUED',
      'email.sending dead@dest.test: SENDING',
    ]);
  });

  it('a bounce while another recipient still waits: SENDING; the last outcome: BOUNCED', async () => {
    mx.behaviour.set('gone@dest.test', { rcpt: [550, '5.1.1 No such user here'] });
    mx.behaviour.set('grey@dest.test', { greylist: true });
    const id = await d.send(['gone@dest.test', 'grey@dest.test']);
    await settle(d.env);
    expect(await told(id)).toEqual([
      'email.bounced gone@dest.test: SENDING',
      // grey's first deferral (decisions.md, "delivery_delayed").
      'email.delivery_delayed grey@dest.test: SENDING',
      'email.queued -: QUEUED',
      'email.sending gone@dest.test: SENDING',
      'email.sending grey@dest.test: SENDING',
    ]);
    d.env.clock.advance(60_000);
    await settle(d.env);
    expect((await told(id)).filter((t) => t.includes('grey'))).toEqual([
      'email.delivered grey@dest.test: BOUNCED',
      'email.delivery_delayed grey@dest.test: SENDING',
      'email.sending grey@dest.test: SENDING',
      'email.sending grey@dest.test: SENDING',
      'email.sent grey@dest.test: BOUNCED',
    ]);
  });

  it('an internal failure (the domain has no DKIM key to sign with): FAILED', async () => {
    const [{ key }] = (await d.env.query<{ key: string }>(
      "SELECT dkim_private_key AS key FROM domains WHERE name = 'sender.test'",
    )) as [{ key: string }];
    await d.env.query("UPDATE domains SET dkim_private_key = NULL WHERE name = 'sender.test'");
    let id: string;
    try {
      id = await d.send(['f@dest.test']);
      await settle(d.env);
    } finally {
      await d.env.query("UPDATE domains SET dkim_private_key = ? WHERE name = 'sender.test'", key);
    }
    expect(await told(id)).toEqual([
      'email.failed f@dest.test: FAILED',
      'email.queued -: QUEUED',
      'email.sending f@dest.test: SENDING',
    ]);
  });

  it('a spam complaint about the only recipient: COMPLAINED', async () => {
    const to = 'angry@dest.test';
    const id = await d.send([to]);
    await settle(d.env);
    const { returnPath } = await receivedBy(to);
    const result = await d.env.app.inbound.process(Buffer.from(arf(returnPath, to)), [returnPath]);
    expect(result.applied).toHaveLength(1);
    expect((await told(id)).filter((t) => t.startsWith('email.complained'))).toEqual([
      `email.complained ${to}: COMPLAINED`,
    ]);
  });
});
