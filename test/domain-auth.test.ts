import { Resolver } from 'node:dns/promises';
import nodemailer from 'nodemailer';
import { authenticate } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpRelay, RELAY_DEFAULTS, type SmtpRelay } from '../src/smtp/index.ts';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer, Received } from './peers/mx.ts';
import { settle, startDeliveryEnv, startDestinations, type DeliveryEnv } from './delivery-helpers.ts';
import { publish } from './domains-helpers.ts';

/**
 * Issue 28 item 1: the records svc prints, published as they are, make a delivered
 * message pass SPF, DKIM and DMARC at an independent verifier (mailauth).
 */
let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let relay: SmtpRelay;

beforeAll(async () => {
  ({ dns, mx } = await startDestinations());
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
  // The server's host name resolves to the address it sends from (loopback here).
  dns.set('mta.svc.test', { A: ['127.0.0.1'] });
  publish(dns, await d.env.app.domains.getDomain('sender.test'));
  await d.env.app.templates.create(d.env.init.project_id, {
    name: 'welcome',
    slug: 'welcome',
    subject_template: 'Welcome {{ name }}',
    html_template: '<p>Hi {{ name }}</p>',
    text_template: 'Hi {{ name }}',
  });
  relay = createSmtpRelay(d.env.app, {
    ...RELAY_DEFAULTS,
    host: '127.0.0.1',
    port: 0,
    plainAuth: true,
    maxSessions: 5,
    idleTimeoutMs: 10_000,
    closeTimeoutMs: 50,
  });
});

afterAll(async () => {
  await relay?.close();
  await d?.env.close();
  await mx?.close();
  await dns?.close();
});

/** mailauth's verdicts on a message as the peer received it, its DNS answered by the test server. */
async function verdicts(m: Received) {
  const r = new Resolver();
  r.setServers([dns.server]);
  const res = await authenticate(m.raw, {
    resolver: (name: string, rr: string) => r.resolve(name, rr as 'TXT'),
    ip: m.remoteAddress,
    sender: m.from,
    helo: m.helo,
    mta: 'mx.dest.test',
  });
  return {
    spf: res.spf && res.spf.status.result,
    spfDomain: res.spf && res.spf.domain,
    dkim: res.dkim.results.map((x) => [x.status.result, x.signingDomain]),
    dmarc: res.dmarc && res.dmarc.status.result,
  };
}

async function receivedFor(to: string): Promise<Received> {
  await settle(d.env);
  const m = mx.received.find((x) => x.to.includes(to));
  if (!m) throw new Error(`nothing received for ${to}`);
  return m;
}

const PASS = { spf: 'pass', spfDomain: 'bounces.sender.test', dkim: [['pass', 'sender.test']], dmarc: 'pass' };

describe('the records svc prints make SPF, DKIM and DMARC pass at the receiver', () => {
  it('for an API send signed with a 2048-bit key', async () => {
    await d.send(['api@dest.test']);
    const m = await receivedFor('api@dest.test');
    expect(m.from).toMatch(/^bounces\+[0-9a-f]+-[0-9a-f]+@bounces\.sender\.test$/);
    expect(await verdicts(m)).toEqual(PASS);
  });

  it('for a message through the SMTP relay', async () => {
    const port = await relay.listen();
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      secure: false,
      ignoreTLS: true,
      auth: { user: 'apikey', pass: d.key },
    });
    await t.sendMail({ from: 'news@sender.test', to: 'relay@dest.test', subject: 'Relayed', text: 'Hello' });
    expect(await verdicts(await receivedFor('relay@dest.test'))).toEqual(PASS);
  });

  it('for a templated message', async () => {
    await d.send(['tpl@dest.test'], {
      subject: undefined,
      text: undefined,
      html: undefined,
      template: 'welcome',
      variables: { name: 'Ann' },
    });
    expect(await verdicts(await receivedFor('tpl@dest.test'))).toEqual(PASS);
  });
});
