import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundListener, type InboundListener } from '../src/smtp/index.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { smtpTalk } from './peers/smtp-talk.ts';
import { makeCertificate } from './peers/certificates.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';
import {
  authenticateReceived,
  listenInbound,
  receivedFor,
  startDeliveryEnv,
  type DeliveryEnv,
} from './delivery-helpers.ts';
import { caller, signInMembers } from './management-helpers.ts';
import { runSvc } from './cli-runner.ts';

// Receiving mail (issue 34): real clients hand messages to the inbound listener on a real
// socket; routes post them to a real HTTPS receiver as signed webhooks, forward them through
// delivery to the test MX, or hold them for the API.

let dns: DnsServer;
let mx: MxPeer;
let receiver: WebhookReceiver;
let d: DeliveryEnv;
let inbound: InboundListener;
let port: number;
let hook: { id: string; secret: string };
let tokens: Record<string, string>;
let readKey: string;

const DOMAIN = 'sender.test';
const SENDER_RATE = 6;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  receiver = await startWebhookReceiver();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  dns.set('hook.test', { A: ['127.0.0.1'] });
  // svc's forwards leave from 127.0.0.1 with a return path at bounces.sender.test.
  dns.set(`bounces.${DOMAIN}`, {
    TXT: ['v=spf1 ip4:127.0.0.1 -all'],
    MX: [{ exchange: 'mta.svc.test', priority: 10 }],
  });
  d = await startDeliveryEnv(
    dns,
    {
      mxPort: String(mx.port),
      allowInsecureWebhooks: true,
      inboundRatePerIp: '1000',
      inboundRatePerSender: String(SENDER_RATE),
    },
    undefined,
    { webhookCa: [receiver.ca] },
  );
  tokens = await signInMembers(d.env, ['DEVELOPER', 'VIEWER']);
  readKey = d.key;
  await d.env.app.domains.setReceiving(DOMAIN, true);
  const made = await d.env.app.webhooks.create(d.env.init.project_id, {
    url: `https://hook.test:${receiver.port}/inbound`,
    events: ['delivered'],
  });
  hook = { id: made.id, secret: made.secret! };
  ({ inbound, port } = await listenInbound(d.env));
});

afterAll(async () => {
  await inbound.close();
  await d.env.close();
  await mx.close();
  await receiver.close();
  await dns.close();
});

const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => d.env, tokens)(...args);
const P = () => `/v1/organizations/${d.env.init.organization_id}/projects/${d.env.init.project_id}`;

async function addRoute(body: Record<string, unknown>): Promise<{ id: string; pattern: string }> {
  const res = await call('POST', `${P()}/routes`, 'DEVELOPER', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** Hands `raw` to the inbound listener with nodemailer, as an MTA would. */
async function deliver(message: Buffer | string | Promise<Buffer>, to: string[], from = 'ada@outside.test') {
  const raw = await message;
  const t = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true, name: 'mail.outside.test' });
  try {
    return await t.sendMail({ envelope: { from, to }, raw });
  } finally {
    t.close();
  }
}

const compose = (opts: ConstructorParameters<typeof MailComposer>[0]) => new MailComposer(opts).compile().build();

/** The webhook bodies of email.received the receiver got since `from`, once the dispatcher has run. */
async function hooksSince(from: number) {
  await d.env.app.webhookDispatcher().runOnce();
  return receiver.requests
    .slice(from)
    .map((r) => ({ ...r, json: JSON.parse(r.body) as Record<string, any> }))
    .filter((r) => r.json.type === 'email.received');
}

const api = async (path: string) => {
  const res = await d.env.server.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${readKey}` } });
  return res;
};

describe('routes', () => {
  it('are made on a receiving domain of the project only, each pattern once, with a clear error naming the field', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await call('POST', `${P()}/routes`, 'DEVELOPER', body);
      expect(res.statusCode, res.body).toBe(422);
      expect(JSON.stringify(res.json().error.details)).toContain(field);
    };
    await bad({ pattern: 'support@unknown.test', action: 'hold' }, 'pattern');
    await bad({ pattern: 'support@', action: 'hold' }, 'pattern');
    await bad({ pattern: `x@${DOMAIN}`, action: 'webhook' }, 'webhook_id');
    await bad(
      { pattern: `x@${DOMAIN}`, action: 'webhook', webhook_id: '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e' },
      'webhook_id',
    );
    await bad({ pattern: `x@${DOMAIN}`, action: 'forward', forward_to: ['not an address'] }, 'forward_to');
    expect((await call('POST', `${P()}/routes`, 'VIEWER', { pattern: `x@${DOMAIN}`, action: 'hold' })).statusCode).toBe(
      403,
    );
    const r = await addRoute({ pattern: `Dup@${DOMAIN}`, action: 'hold' });
    expect(r.pattern).toBe(`dup@${DOMAIN}`);
    const again = await call('POST', `${P()}/routes`, 'DEVELOPER', { pattern: `dup@${DOMAIN}`, action: 'hold' });
    expect(again.statusCode).toBe(409);
    expect((await call('DELETE', `${P()}/routes/${r.id}`, 'DEVELOPER')).statusCode).toBe(204);
  });

  it('refuse a forward that comes back to its own route', async () => {
    const a = await addRoute({ pattern: `loop-a@${DOMAIN}`, action: 'hold' });
    await addRoute({ pattern: `loop-b@${DOMAIN}`, action: 'forward', forward_to: [`loop-a@${DOMAIN}`] });
    const res = await call('PATCH', `${P()}/routes/${a.id}`, 'DEVELOPER', {
      action: 'forward',
      forward_to: [`loop-b@${DOMAIN}`],
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.body).toContain('forwarding loop');
  });
});

describe('the inbound listener', () => {
  it('refuses at RCPT an address no route takes, and mail for other domains (no open relay)', async () => {
    const s = await smtpTalk(port);
    try {
      await s.reply();
      await s.send('EHLO client.test');
      expect(await s.send('MAIL FROM:<x@outside.test>')).toMatch(/^250/);
      expect(await s.send(`RCPT TO:<nobody@${DOMAIN}>`)).toMatch(/^550 5\.1\.1/);
      expect(await s.send('RCPT TO:<someone@gmail.com>')).toMatch(/^550 5\.1\.1/);
    } finally {
      s.close();
    }
  });

  it('posts a multipart message with non-ASCII names and inline images to the webhook, signed, byte for byte', async () => {
    await addRoute({ pattern: `support@${DOMAIN}`, action: 'webhook', webhook_id: hook.id });
    const pdf = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 31) % 256));
    const png1 = Buffer.from(Array.from({ length: 700 }, (_, i) => (i * 7) % 256));
    const png2 = Buffer.from(Array.from({ length: 900 }, (_, i) => (i * 13) % 256));
    const raw = await compose({
      from: 'Åsa Öberg <asa@outside.test>',
      to: `support@${DOMAIN}`,
      subject: 'Frågor om fakturan – 日本語',
      messageId: '<thread-1@outside.test>',
      // CRLF line ends, as a mail client writes them (svc stores bare LFs as CRLF).
      text: 'Hej!\r\n\r\nSe bilagan.\r\n\r\nOn Tue, 3 Nov 2026 at 10:02, Support <support@sender.test> wrote:\r\n> Earlier text\r\n',
      html: '<p>Hej! <img src="cid:logo@x"> <img src="cid:sig@x"></p>',
      attachments: [
        { filename: 'Résumé – 2026.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'logo.png', content: png1, contentType: 'image/png', cid: 'logo@x' },
        { filename: 'sig.png', content: png2, contentType: 'image/png', cid: 'sig@x' },
      ],
    });
    const from = receiver.requests.length;
    const info = await deliver(raw, [`support@${DOMAIN}`]);
    expect(info.response).toMatch(/^250/);
    const [got, ...more] = await hooksSince(from);
    expect(more).toHaveLength(0);
    // Signed as every webhook (X-Service-Signature: t=…,v1=HMAC(secret, t.body)).
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got!.headers['x-service-signature']))!;
    expect(v1).toBe(createHmac('sha256', hook.secret).update(`${t}.${got!.body}`).digest('hex'));
    expect(got!.json.type).toBe('email.received');
    const e = got!.json.data.email;
    expect(e.direction).toBe('inbound');
    expect(e.envelope).toMatchObject({
      mail_from: 'ada@outside.test',
      rcpt_to: [`support@${DOMAIN}`],
      helo: 'mail.outside.test',
    });
    expect(e.from).toEqual({ address: 'asa@outside.test', name: 'Åsa Öberg' });
    expect(e.subject).toBe('Frågor om fakturan – 日本語');
    expect(e.message_id).toBe('thread-1@outside.test');
    expect(e.text).toContain('Se bilagan.');
    expect(e.reply_text).toContain('Se bilagan.');
    expect(e.reply_text).not.toContain('Earlier text');
    expect(e.html).toContain('cid:logo@x');
    const byName = Object.fromEntries(
      (e.attachments as { filename: string; content_base64: string; content_id: string | null }[]).map((a) => [
        a.filename,
        a,
      ]),
    );
    expect(Buffer.from(byName['Résumé – 2026.pdf']!.content_base64, 'base64').equals(pdf)).toBe(true);
    expect(Buffer.from(byName['logo.png']!.content_base64, 'base64').equals(png1)).toBe(true);
    expect(Buffer.from(byName['sig.png']!.content_base64, 'base64').equals(png2)).toBe(true);
    expect(byName['logo.png']!.content_id).toBe('logo@x');
    // The message as it arrived, by its signed link, without a key.
    const rawUrl = new URL(e.raw_url as string);
    const res = await d.env.server.inject({ method: 'GET', url: rawUrl.pathname });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(raw)).toBe(true);
    // An edited link is refused.
    expect((await d.env.server.inject({ method: 'GET', url: `${rawUrl.pathname}x` })).statusCode).toBe(404);
    // Listed through the API, with the webhook's outcome.
    const listed = (await api('/v1/received-emails?q=fakturan')).json().data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: e.id, outcome: 'queued', webhook: { status: 'succeeded', attempts: 1 } });
  });

  it('passes what follows the + of a prefix route, holds for a catch-all, and lets the API delete it', async () => {
    await addRoute({ pattern: `reply+*@${DOMAIN}`, action: 'webhook', webhook_id: hook.id });
    await addRoute({ pattern: `*@${DOMAIN}`, action: 'hold' });
    const from = receiver.requests.length;
    await deliver(
      compose({ from: 'bob@outside.test', to: `reply+Ticket-42@${DOMAIN}`, subject: 'Re: 42', text: 'ok' }),
      [`reply+Ticket-42@${DOMAIN}`],
    );
    const [got] = await hooksSince(from);
    expect(got!.json.data.email.recipients).toEqual([{ address: `reply+Ticket-42@${DOMAIN}`, tag: 'Ticket-42' }]);
    await deliver(
      compose({ from: '"Carol Öst" <carol@outside.test>', to: `anything@${DOMAIN}`, subject: 'Held one', text: 'x' }),
      [`anything@${DOMAIN}`],
    );
    expect(await hooksSince(receiver.requests.length)).toHaveLength(0);
    const held = (await api('/v1/received-emails?outcome=held')).json().data;
    expect(held.map((m: { subject: string }) => m.subject)).toContain('Held one');
    const id = held.find((m: { subject: string }) => m.subject === 'Held one').id;
    const detail = (await api(`/v1/received-emails/${id}`)).json().data;
    // Addresses as the list gives them, the sender's name beside them (as an email's from_name).
    expect(detail).toMatchObject({
      action: 'hold',
      outcome: 'held',
      from: 'carol@outside.test',
      from_name: 'Carol Öst',
      to: [`anything@${DOMAIN}`],
    });
    expect(detail.text.trim()).toBe('x');
    expect((await call('DELETE', `${P()}/received-emails/${id}`, 'DEVELOPER')).statusCode).toBe(204);
    expect((await api(`/v1/received-emails/${id}`)).statusCode).toBe(404);
  });

  it('forwards through delivery, re-signed with its return path: SPF and DKIM pass an independent verifier', async () => {
    await addRoute({ pattern: `fwd@${DOMAIN}`, action: 'forward', forward_to: ['ops@dest.test'] });
    const raw = await compose({
      from: 'dora@outside.test',
      to: `fwd@${DOMAIN}`,
      subject: 'Please forward',
      text: 'Body',
    });
    await deliver(raw, [`fwd@${DOMAIN}`]);
    const m = await receivedFor(d.env, mx, 'ops@dest.test');
    const auth = await authenticateReceived(m, dns);
    expect((auth.spf as { status: { result: string } }).status.result).toBe('pass');
    expect(auth.dkim.results.find((r) => r.signingDomain === DOMAIN)?.status.result).toBe('pass');
    // The message as written, after svc's fields and the trace of this hop.
    expect(m.raw.toString()).toContain(`Delivered-To: fwd@${DOMAIN}`);
    expect(
      m.raw.subarray(m.raw.length - raw.length).equals(raw) ||
        m.raw.toString().endsWith(raw.toString().split('\r\n\r\n').slice(1).join('\r\n\r\n')),
    ).toBe(true);
    const listed = (await api('/v1/received-emails?q=please%20forward')).json().data;
    expect(listed[0]).toMatchObject({ action: 'forward', outcome: 'forwarded' });
    expect(listed[0].forwarded_email_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stops a message that has been here before (a forwarding loop) with 554 5.4.6', async () => {
    const raw = `Delivered-To: support@${DOMAIN}\r\n${(await compose({ from: 'x@outside.test', to: `support@${DOMAIN}`, subject: 'again', text: 'x' })).toString()}`;
    await expect(deliver(raw, [`support@${DOMAIN}`])).rejects.toMatchObject({
      responseCode: 554,
      response: expect.stringMatching(/5\.4\.6/),
    });
  });

  it('takes a 20 MiB message, linking its large attachment; refuses a thousand parts and deep nesting before parsing', async () => {
    // 15 MiB as base64: a message of 20.3 MiB.
    const big = Buffer.alloc(15 * 1024 * 1024, 0x61);
    const from = receiver.requests.length;
    await deliver(
      await compose({
        from: 'big@outside.test',
        to: `support@${DOMAIN}`,
        subject: 'Big',
        text: 'see',
        attachments: [{ filename: 'big.bin', content: big }],
      }),
      [`support@${DOMAIN}`],
      'big@outside.test',
    );
    const [got] = await hooksSince(from);
    expect(got!.json.data.email.size).toBeGreaterThan(20 * 1024 * 1024);
    const a = got!.json.data.email.attachments[0];
    expect(a).toMatchObject({ filename: 'big.bin', size: big.length });
    expect(a.content_base64).toBeUndefined();
    const res = await d.env.server.inject({ method: 'GET', url: new URL(a.url as string).pathname });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(big)).toBe(true);

    const parts = Array.from({ length: 1000 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join(
      '',
    );
    const bomb = `From: m@outside.test\r\nTo: support@${DOMAIN}\r\nSubject: bomb\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}--b--\r\n`;
    await expect(deliver(bomb, [`support@${DOMAIN}`], 'm@outside.test')).rejects.toMatchObject({ responseCode: 554 });
    let nested = 'Content-Type: text/plain\r\n\r\ndeep\r\n';
    for (let i = 0; i < 30; i++)
      nested = `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n${nested}--n${i}--\r\n`;
    const deep = `From: m@outside.test\r\nTo: support@${DOMAIN}\r\nSubject: deep\r\nMIME-Version: 1.0\r\n${nested}`;
    await expect(deliver(deep, [`support@${DOMAIN}`], 'm@outside.test')).rejects.toMatchObject({ responseCode: 554 });
  });

  it('shows a forged sender failing DMARC in the authentication results', async () => {
    dns.set('bank.test', { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
    dns.set('_dmarc.bank.test', { TXT: ['v=DMARC1; p=reject'] });
    const from = receiver.requests.length;
    await deliver(
      compose({ from: 'ceo@bank.test', to: `support@${DOMAIN}`, subject: 'Wire money', text: 'now' }),
      [`support@${DOMAIN}`],
      'ceo@bank.test',
    );
    const [got] = await hooksSince(from);
    const auth = got!.json.data.email.auth;
    expect(auth.spf.result).toBe('fail');
    expect(auth.dmarc).toMatchObject({ result: 'fail', policy: 'reject' });
  });

  it('answers 451 4.7.1 past a sender’s rate, at RCPT', async () => {
    const sender = 'flood@outside.test';
    for (let i = 0; i < SENDER_RATE; i++) {
      await deliver(
        compose({ from: sender, to: `anything@${DOMAIN}`, subject: `n${i}`, text: 'x' }),
        [`anything@${DOMAIN}`],
        sender,
      );
    }
    await expect(
      deliver(
        compose({ from: sender, to: `anything@${DOMAIN}`, subject: 'over', text: 'x' }),
        [`anything@${DOMAIN}`],
        sender,
      ),
    ).rejects.toMatchObject({ responseCode: 451 });
  });
});

describe('STARTTLS', () => {
  it('is offered when the server has a certificate, and a client that requires it hands its message over TLS', async () => {
    const cert = await makeCertificate({ names: ['mta.svc.test'] });
    const secure = createInboundListener(d.env.app, {
      host: '127.0.0.1',
      port: 0,
      tls: { cert: Buffer.from(cert.cert), key: Buffer.from(cert.key) },
      maxSessions: 10,
      idleTimeoutMs: 10_000,
      closeTimeoutMs: 50,
    });
    const securePort = await secure.listen();
    try {
      const s = await smtpTalk(securePort);
      await s.reply();
      expect(await s.send('EHLO client.test')).toMatch(/STARTTLS/);
      s.close();
      const t = nodemailer.createTransport({
        host: '127.0.0.1',
        port: securePort,
        requireTLS: true,
        name: 'mail.outside.test',
        tls: { ca: cert.ca, servername: 'mta.svc.test' },
      });
      const from = receiver.requests.length;
      const info = await t.sendMail({
        envelope: { from: 'tls@outside.test', to: [`support@${DOMAIN}`] },
        raw: await compose({ from: 'tls@outside.test', to: `support@${DOMAIN}`, subject: 'Over TLS', text: 'x' }),
      });
      t.close();
      expect(info.response).toMatch(/^250/);
      const [got] = await hooksSince(from);
      expect(got!.json.data.email.subject).toBe('Over TLS');
    } finally {
      await secure.close();
    }
  });
});

const swaks = ['/usr/bin/swaks', '/usr/local/bin/swaks'].find((p) => existsSync(p));

describe.skipIf(!swaks)('swaks (when installed)', () => {
  it('hands a message to a route', async () => {
    const from = receiver.requests.length;
    const out = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        swaks!,
        [
          '--server',
          '127.0.0.1',
          '--port',
          String(port),
          '--from',
          'eve@outside.test',
          '--to',
          `support@${DOMAIN}`,
          '--header',
          'Subject: via swaks',
        ],
        { timeout: 20_000 },
        (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr }),
      ),
    );
    expect(out.code, out.out).toBe(0);
    const [got] = await hooksSince(from);
    expect(got!.json.data.email.subject).toBe('via swaks');
  });
});

describe('the CLI and retention', () => {
  it('svc routes and svc received show what the API shows; a bad action is one clear line and exit 2', async () => {
    const routes = await runSvc(d.env.dir, ['routes', 'list', '--project', 'Web', '--json'], d.env.cliEnv);
    expect(routes.code, routes.stderr).toBe(0);
    const patterns = (routes.json() as { pattern: string }[]).map((r) => r.pattern);
    expect(patterns).toEqual(expect.arrayContaining([`support@${DOMAIN}`, `reply+*@${DOMAIN}`, `*@${DOMAIN}`]));
    const added = await runSvc(
      d.env.dir,
      ['routes', 'add', '--project', 'Web', '--pattern', `cli@${DOMAIN}`, '--forward', 'ops@dest.test', '--json'],
      d.env.cliEnv,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.json()).toMatchObject({ pattern: `cli@${DOMAIN}`, action: 'forward', forward_to: ['ops@dest.test'] });
    const both = await runSvc(
      d.env.dir,
      ['routes', 'add', '--project', 'Web', '--pattern', `x@${DOMAIN}`, '--hold', '--forward', 'a@b.test'],
      d.env.cliEnv,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/name one action/);
    const listed = await runSvc(
      d.env.dir,
      ['received', 'list', '--project', 'Web', '--q', 'fakturan', '--json'],
      d.env.cliEnv,
    );
    expect(listed.code, listed.stderr).toBe(0);
    expect((listed.json() as { subject: string }[]).map((m) => m.subject)).toEqual(['Frågor om fakturan – 日本語']);
  });

  it('deletes received messages with the bodies (--body-retention)', async () => {
    expect((await api('/v1/received-emails')).json().data.length).toBeGreaterThan(0);
    d.env.clock.advance(31 * 86_400_000);
    const r = await d.env.app.retention.runOnce();
    expect(r.received).toBeGreaterThan(0);
    expect((await api('/v1/received-emails')).json().data).toEqual([]);
  });
});
