import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpRelay } from '../src/smtp/index.ts';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer, Received } from './peers/mx.ts';
import {
  addSigningDomain,
  authenticateReceived,
  receivedFor as received,
  settle,
  startDeliveryEnv,
  startDestinations,
  type DeliveryEnv,
} from './delivery-helpers.ts';
import { publish } from './domains-helpers.ts';
import { SPF_CACHE_MS } from '../src/delivery/spf-verdict.ts';
import { testRelay } from './relay-helpers.ts';

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
  relay = testRelay(d.env.app);
});

afterAll(async () => {
  await relay?.close();
  await d?.env.close();
  await mx?.close();
  await dns?.close();
});

/** mailauth's verdicts on a message as the peer received it, its DNS answered by the test server. */
async function verdicts(m: Received) {
  const res = await authenticateReceived(m, dns);
  return {
    spf: res.spf && res.spf.status.result,
    spfDomain: res.spf && res.spf.domain,
    dkim: res.dkim.results.map((x) => [x.status.result, x.signingDomain]),
    dmarc: res.dmarc && res.dmarc.status.result,
  };
}

const receivedFor = (to: string) => received(d.env, mx, to);

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

describe('spf_aligned and spf_authorized_ip', () => {
  it('are true when the published SPF passes for the address the message left from, evaluated once per (domain, address)', async () => {
    const asked = () => dns.queries.filter((q) => q === 'TXT bounces.sender.test').length;
    // Past the earlier tests' cached evaluation: the first send below evaluates anew.
    d.env.clock.advance(SPF_CACHE_MS + 1);
    const before = asked();
    const first = await d.send(['spf1@dest.test']);
    await settle(d.env);
    const second = await d.send(['spf2@dest.test']);
    await settle(d.env);
    for (const id of [first, second])
      expect(await d.email(id)).toMatchObject({
        spf_domain: 'bounces.sender.test',
        spf_aligned: 1,
        spf_authorized_ip: 1,
      });
    expect(asked() - before).toBe(1);
  });

  it('are false when the MAIL FROM domain publishes no SPF, or one that does not list the address', async () => {
    await addSigningDomain(d.env, dns, 'nospf.test');
    const none = await d.send(['nospf@dest.test'], { from: 'news@nospf.test' });
    await settle(d.env);
    expect(await d.email(none)).toMatchObject({ spf_aligned: 0, spf_authorized_ip: 0 });
    await addSigningDomain(d.env, dns, 'elsewhere.test');
    dns.set('bounces.elsewhere.test', { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
    const other = await d.send(['elsewhere@dest.test'], { from: 'news@elsewhere.test' });
    await settle(d.env);
    expect(await d.email(other)).toMatchObject({ spf_aligned: 0, spf_authorized_ip: 0 });
  });
});
