import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { MAIL_FROM, startMxPeer, type MxPeer } from './peers/mx.ts';
import { count, createTestEnv, type TestEnv } from './harness.ts';
import { addSigningDomain, settle, verifyDkim, SELECTOR } from './delivery-helpers.ts';
import { parseReturnPath, returnPathCovers } from '../src/delivery/index.ts';
import { classifyReply, describeRule } from '../src/delivery/classify.ts';
import { runSvc } from './cli-runner.ts';

let dns: DnsServer;
let mx: MxPeer;
let env: TestEnv;
let key: string;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  dns.set('nullmx.test', { MX: [{ exchange: '', priority: 0 }] });
  // An MX host with an IPv6 address nobody listens on: delivery falls back to its IPv4 address.
  dns.set('v6.test', { MX: [{ exchange: 'mx.v6.test', priority: 10 }] });
  dns.set('mx.v6.test', { AAAA: ['::1'], A: ['127.0.0.1'] });
  // No MX at all: the domain's own address is used (RFC 5321 §5.1).
  dns.set('nomx.test', { A: ['127.0.0.1'] });
  dns.set('servfail.test', { rcode: 'SERVFAIL' });
  // The SPF `svc domains add` prints for sender.test, and our host name at the address we send from.
  dns.set('bounces.sender.test', { TXT: ['v=spf1 a:mta.svc.test ~all'] });
  dns.set('mta.svc.test', { A: ['127.0.0.1'] });
  env = await createTestEnv({
    dnsServers: dns.server,
    mxPort: String(mx.port),
    hostname: 'mta.svc.test',
    deliveryRetrySchedule: '1m,5m',
    deliveryMaxAge: '1h',
    workers: '1',
  });
  await addSigningDomain(env, dns, 'sender.test');
  key = await env.key({ env: 'LIVE' });
  await env.app.delivery().start();
});

afterAll(async () => {
  await env.close();
  await mx.close();
  await dns.close();
});

async function send(to: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const res = await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${key}` },
    payload: { from: 'news@sender.test', to, subject: 'Hello', text: 'Hi there', html: '<p>Hi there</p>', ...extra },
  });
  expect(res.statusCode).toBe(202);
  return res.json().data.id as string;
}

const email = async (id: string) => (await env.query<Record<string, any>>('SELECT * FROM emails WHERE id = ?', id))[0]!;
const recipients = (id: string) =>
  env.query<Record<string, any>>(
    'SELECT r.* FROM recipients r JOIN emails e ON e.seq = r.email_seq WHERE e.id = ? ORDER BY r.id',
    id,
  );
const events = async (id: string) =>
  (
    await env.query<{ type: string; data: string }>(
      'SELECT type, data FROM email_events ev JOIN emails e ON e.seq = ev.email_seq WHERE e.id = ? ORDER BY ev.seq',
      id,
    )
  ).map((e) => ({ type: e.type, ...JSON.parse(e.data) }));
/** The server secret that signs return paths. */
const returnPathSecret = async () =>
  (await env.query<{ value: Buffer }>("SELECT value FROM server_secrets WHERE name = 'return-path'"))[0]!.value;

describe('delivery to recipients’ mail servers', () => {
  it('delivers, DKIM-signed for the From domain, with the lifecycle events', async () => {
    const id = await send(['ada@dest.test']);
    await settle(env);
    expect(await email(id)).toMatchObject({
      status: 'DELIVERED',
      final_smtp_code: 250,
      dkim_d: 'sender.test',
      dkim_selector: SELECTOR,
      dkim_signing_status: 'expected',
    });
    expect(await email(id)).toMatchObject({
      dkim_aligned: 1,
      spf_domain: 'bounces.sender.test',
      spf_aligned: 1,
      dmarc_aligned: 1,
    });
    const detail = (
      await env.server.inject({ url: `/v1/emails/${id}`, headers: { authorization: `Bearer ${key}` } })
    ).json().data;
    expect(detail).toMatchObject({
      status: 'DELIVERED',
      dkim_aligned: true,
      spf_aligned: true,
      dmarc_aligned: true,
      message_id: `${id}@mta.svc.test`,
    });
    expect((await email(id)).delivered_at).toBeTruthy();
    expect((await events(id)).map((e) => e.type)).toEqual(['queued', 'sending', 'smtp_connected', 'sent', 'delivered']);
    expect((await events(id))[2]).toMatchObject({
      recipient: 'ada@dest.test',
      mx_host: 'mx.dest.test',
      ip: '127.0.0.1',
      tls: false,
    });
    const msg = mx.received.find((m) => m.to.includes('ada@dest.test'))!;
    // The return path names the email and is signed for this recipient only (issue 15).
    expect(msg.from).toMatch(new RegExp(`^bounces\\+${id.replaceAll('-', '')}-[0-9a-f]{12}@bounces\\.sender\\.test$`));
    const rp = parseReturnPath(msg.from)!;
    expect(rp).toMatchObject({ emailId: id, fromDomain: 'sender.test' });
    const secret = await returnPathSecret();
    expect(returnPathCovers(secret, rp, 'ada@dest.test')).toBe(true);
    expect(returnPathCovers(secret, rp, 'Ada@DEST.test')).toBe(true);
    expect(returnPathCovers(secret, rp, 'bob@dest.test')).toBe(false);
    expect(returnPathCovers(Buffer.alloc(32), rp, 'ada@dest.test')).toBe(false);
    expect(await verifyDkim(msg.raw, dns)).toEqual({ status: 'pass', domain: 'sender.test', selector: SELECTOR });
    expect(msg.raw.toString()).toContain(`Message-ID: <${id}@mta.svc.test>`);
  });

  it('sends one message to a destination once built, one transaction per recipient with its own return path; bcc stays out of the headers', async () => {
    const before = mx.received.length;
    const id = await send(['a1@dest.test'], { cc: ['a2@dest.test'], bcc: ['a3@dest.test'] });
    await settle(env);
    expect((await email(id)).status).toBe('DELIVERED');
    const got = mx.received.slice(before);
    expect(got.map((m) => m.to)).toEqual([['a1@dest.test'], ['a2@dest.test'], ['a3@dest.test']]);
    // Built and signed once: the same bytes in every transaction.
    expect(new Set(got.map((m) => m.raw.toString())).size).toBe(1);
    expect(got[0]!.raw.toString()).not.toMatch(/a3@dest\.test/);
    // Each return path is signed for its own recipient only.
    const secret = await returnPathSecret();
    expect(new Set(got.map((m) => m.from)).size).toBe(3);
    for (const m of got) {
      const rp = parseReturnPath(m.from)!;
      expect(returnPathCovers(secret, rp, m.to[0]!)).toBe(true);
      for (const other of ['a1@dest.test', 'a2@dest.test', 'a3@dest.test'].filter((a) => a !== m.to[0]))
        expect(returnPathCovers(secret, rp, other)).toBe(false);
    }
  });

  it('goes on with the next recipient on the same session after one is refused at RCPT', async () => {
    mx.behaviour.set('b2@dest.test', { rcpt: [550, '5.1.1 <b2@dest.test>: Recipient address rejected: User unknown'] });
    const before = mx.received.length;
    const id = await send(['b1@dest.test', 'b2@dest.test', 'b3@dest.test']);
    await settle(env);
    expect(mx.received.slice(before).map((m) => m.to)).toEqual([['b1@dest.test'], ['b3@dest.test']]);
    expect((await recipients(id)).map((r) => [r.address, r.status])).toEqual([
      ['b1@dest.test', 'DELIVERED'],
      ['b2@dest.test', 'BOUNCED'],
      ['b3@dest.test', 'DELIVERED'],
    ]);
    expect(await email(id)).toMatchObject({ status: 'BOUNCED', bounce_type: 'hard' });
  });

  it('bounces a dead address hard and suppresses it', async () => {
    mx.behaviour.set('gone@dest.test', {
      rcpt: [550, '5.1.1 <gone@dest.test>: Recipient address rejected: User unknown'],
    });
    const id = await send(['gone@dest.test']);
    await settle(env);
    expect(await email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
      final_smtp_code: 550,
      final_smtp_enhanced: '5.1.1',
    });
    expect((await events(id)).at(-1)).toMatchObject({
      type: 'bounced',
      recipient: 'gone@dest.test',
      bounce_type: 'hard',
      smtp_code: 550,
    });
    expect(await count(env, 'suppressions', "email = 'gone@dest.test' AND reason = 'HARD_BOUNCE'")).toBe(1);
  });

  it('never suppresses for a reply about our sender: a refused MAIL FROM, a sender callout (issue 29)', async () => {
    mx.behaviour.set(MAIL_FROM, { mailFrom: [550, '5.1.1 User unknown'] });
    const refused = await send(['mailfrom@dest.test']);
    await settle(env);
    mx.behaviour.delete(MAIL_FROM);
    // Exim's answer when its callout to our sender's domain fails (verify.c, not is_recipient).
    const callback = 'Called: 192.0.2.1 Sent: RCPT TO:<bounces@sender.test> Response: 550 User unknown';
    mx.behaviour.set('callout@dest.test', { rcpt: [550, `5.1.1 ${callback}`] });
    const callout = await send(['callout@dest.test']);
    await settle(env);
    for (const id of [refused, callout]) {
      expect(await email(id)).toMatchObject({
        status: 'BOUNCED',
        bounce_type: 'soft',
        bounce_category: 'policy-rejection',
        final_smtp_enhanced: '5.1.1',
      });
    }
    expect(await count(env, 'suppressions', "email IN ('mailfrom@dest.test', 'callout@dest.test')")).toBe(0);
  });

  it('does not suppress for a block of our sending IP', async () => {
    mx.behaviour.set('blocked@dest.test', {
      rcpt: [554, '5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org'],
    });
    const id = await send(['blocked@dest.test']);
    await settle(env);
    expect(await email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'soft',
      bounce_category: 'reputation-blocklist',
    });
    expect(await count(env, 'suppressions', "email = 'blocked@dest.test'")).toBe(0);
  });

  it('marks the email BOUNCED when one recipient bounced and the others were delivered', async () => {
    mx.behaviour.set('nope@dest.test', { rcpt: [550, '5.1.1 User unknown'] });
    const id = await send(['yes@dest.test', 'nope@dest.test']);
    await settle(env);
    expect((await recipients(id)).map((r) => r.status)).toEqual(['DELIVERED', 'BOUNCED']);
    expect(await email(id)).toMatchObject({ status: 'BOUNCED', bounce_type: 'hard' });
  });

  it('retries a greylisted recipient on the schedule, driven by the clock', async () => {
    mx.behaviour.set('grey@dest.test', { greylist: true });
    const id = await send(['grey@dest.test']);
    await settle(env);
    const r = (await recipients(id))[0]!;
    expect(r).toMatchObject({ status: 'QUEUED', attempts: 1, smtp_code: 451 });
    expect(Date.parse(r.next_attempt_at) - env.clock.now()).toBe(60_000);
    expect((await email(id)).status).toBe('SENDING');
    env.clock.advance(60_000);
    await settle(env);
    expect((await email(id)).status).toBe('DELIVERED');
    expect((await recipients(id))[0]!.attempts).toBe(2);
  });

  it('retries a full mailbox until the maximum age, then bounces it soft without suppressing', async () => {
    mx.behaviour.set('full@dest.test', { rcpt: [452, '4.2.2 The recipient’s inbox is out of storage space'] });
    const id = await send(['full@dest.test']);
    await settle(env);
    expect((await recipients(id))[0]).toMatchObject({ status: 'QUEUED', bounce_category: 'mailbox-full' });
    for (let i = 0; i < 15 && (await email(id)).status !== 'BOUNCED'; i++) {
      env.clock.advance(5 * 60_000);
      await settle(env);
    }
    expect(await email(id)).toMatchObject({ status: 'BOUNCED', bounce_type: 'soft', bounce_category: 'mailbox-full' });
    expect(await count(env, 'suppressions', "email = 'full@dest.test'")).toBe(0);
  });

  it('slows a destination down after 421, leaving others untouched', async () => {
    mx.behaviour.set('busy@dest.test', { rcpt: [421, '4.7.0 Too many connections, try again later'] });
    const id = await send(['busy@dest.test']);
    await settle(env);
    expect((await recipients(id))[0]).toMatchObject({ status: 'QUEUED', bounce_category: 'rate-limited' });
    expect(env.app.delivery().throttle.describe('dest.test', env.clock.now())).toMatchObject({ throttled: true });
    expect(env.app.delivery().throttle.describe('other.test', env.clock.now()).throttled).toBe(false);
    mx.behaviour.delete('busy@dest.test');
    env.clock.advance(10 * 60_000);
    await settle(env);
    expect((await email(id)).status).toBe('DELIVERED');
  });

  it('retries after the peer hangs up in the middle of DATA', async () => {
    mx.behaviour.set('drop@dest.test', { disconnectInData: true });
    const id = await send(['drop@dest.test']);
    await settle(env);
    expect((await recipients(id))[0]).toMatchObject({ status: 'QUEUED', bounce_category: 'connection-error' });
    mx.behaviour.delete('drop@dest.test');
    env.clock.advance(60_000);
    await settle(env);
    expect((await email(id)).status).toBe('DELIVERED');
  });

  it.each([
    ['nowhere.test', 'hard', 'dns-mx-failure'],
    ['nullmx.test', 'hard', 'invalid-recipient'],
  ])('bounces a recipient at %s (%s, %s)', async (domain, type, category) => {
    const id = await send([`x@${domain}`]);
    await settle(env);
    expect(await email(id)).toMatchObject({ status: 'BOUNCED', bounce_type: type, bounce_category: category });
  });

  it.each(['v6.test', 'nomx.test'])(
    'delivers to %s (IPv6 falls back to IPv4; no MX uses the A record)',
    async (domain) => {
      const id = await send([`x@${domain}`]);
      await settle(env);
      expect((await email(id)).status).toBe('DELIVERED');
      expect((await events(id)).find((e) => e.type === 'smtp_connected')).toMatchObject({ ip: '127.0.0.1' });
    },
  );

  it('retries when DNS fails temporarily (SERVFAIL)', async () => {
    const id = await send(['x@servfail.test']);
    await settle(env);
    expect((await recipients(id))[0]).toMatchObject({ status: 'QUEUED', bounce_category: 'dns-mx-failure' });
    expect((await recipients(id))[0]!.last_error).toMatch(/MX lookup for servfail.test failed/);
  });
});

describe('which classifier rule decided (issue 29, item 4)', () => {
  /** The line the classifier gives for the reply stored on a recipient row. */
  const ruleOf = (r: Record<string, any>) =>
    describeRule(
      classifyReply({ code: r.smtp_code, enhanced: r.smtp_enhanced, text: r.smtp_text }, { stage: 'rcpt' }).rule,
    );

  it('keeps the rule of a bounce on the recipient, and shows it over the API, in its event and in svc emails show', async () => {
    mx.behaviour.set('rule@dest.test', { rcpt: [550, '5.1.1 Rejected'] });
    const id = await send(['rule@dest.test']);
    await settle(env);
    const row = (await recipients(id))[0]!;
    const line = ruleOf(row);
    expect(row).toMatchObject({ status: 'BOUNCED', bounce_rule: line });
    const res = await env.server.inject({ url: `/v1/emails/${id}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.json().data).toMatchObject({
      status: 'BOUNCED',
      bounce_category: row.bounce_category,
      bounce_rule: line,
    });
    expect((await events(id)).at(-1)).toMatchObject({ type: 'bounced', bounce_rule: line });
    const text = await runSvc(env.dir, ['emails', 'show', id], env.cliEnv);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`rule@dest.test: BOUNCED`);
    expect(text.stdout).toContain(`\n    rule: ${line}\n`);
    const json = await runSvc(env.dir, ['emails', 'show', id, '--json'], env.cliEnv);
    expect(json.json()).toMatchObject({
      bounce_rule: line,
      delivery: [{ recipient: 'rule@dest.test', bounce_rule: line }],
    });
  });

  it('keeps the rule of a retry while the recipient waits, and forgets it once delivered', async () => {
    mx.behaviour.set('later@dest.test', { greylist: true });
    const id = await send(['later@dest.test']);
    await settle(env);
    const row = (await recipients(id))[0]!;
    expect(row).toMatchObject({ status: 'QUEUED', bounce_rule: ruleOf(row) });
    const text = await runSvc(env.dir, ['emails', 'show', id], env.cliEnv);
    expect(text.stdout).toContain(`\n    rule: ${ruleOf(row)}`);
    env.clock.advance(60_000);
    await settle(env);
    expect((await recipients(id))[0]).toMatchObject({ status: 'DELIVERED', bounce_rule: null });
    expect(await email(id)).toMatchObject({ status: 'DELIVERED', bounce_rule: null });
  });
});
