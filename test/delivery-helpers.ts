import type { Logger } from '../src/lib/logger.ts';
import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer, type Received } from './peers/mx.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';
import { count, createTestEnv, type TestEnv } from './harness.ts';
import { signingDomainRows } from './signing-domain.ts';
import type { ConfigInput } from '../src/config/schema.ts';
import { sleep } from '../src/lib/sleep.ts';
import { createInboundListener, type InboundListener } from '../src/smtp/index.ts';
import { smtpTalk } from './peers/smtp-talk.ts';

export const SELECTOR = 'svc202603';

/** A verified sending domain with a DKIM key, bound to the env's project, its key published in `dns`. */
export async function addSigningDomain(env: TestEnv, dns: DnsServer, domain: string): Promise<void> {
  const { publicKey, statements } = signingDomainRows({
    organizationId: env.init.organization_id,
    projectId: env.init.project_id,
    name: domain,
    selector: SELECTOR,
    at: new Date(env.clock.now()).toISOString(),
  });
  for (const [sql, params] of statements) await env.query(sql, ...params);
  dns.set(`${SELECTOR}._domainkey.${domain}`, { TXT: [`v=DKIM1; k=rsa; p=${publicKey}`] });
}

/** Verifies the DKIM signature of a delivered message with an independent verifier (mailauth) against `dns`. */
export async function verifyDkim(
  raw: Buffer,
  dns: DnsServer,
): Promise<{ status: string; domain: string; selector: string }> {
  const result = await dkimVerify(raw, { resolver: resolverOn(dns) });
  const s = result.results[0];
  return { status: s?.status?.result ?? 'none', domain: s?.signingDomain ?? '', selector: s?.selector ?? '' };
}

/** mailauth's resolver, asking the test DNS server `dns`. */
function resolverOn(dns: DnsServer): (name: string, rr: string) => Promise<string[] | string[][]> {
  const r = new Resolver();
  r.setServers([dns.server]);
  return (name, rr) => r.resolve(name, rr as 'TXT');
}

/** SPF, DKIM and DMARC (mailauth's authenticate) of a message as the MX peer received it, its DNS answered by `dns`. */
export function authenticateReceived(m: Received, dns: DnsServer) {
  return authenticate(m.raw, {
    resolver: resolverOn(dns),
    ip: m.remoteAddress,
    sender: m.from,
    helo: m.helo,
    mta: 'mx.dest.test',
  });
}

/** The message the MX peer received for `to`, once the engine has worked through what is due. */
export async function receivedFor(env: TestEnv, mx: MxPeer, to: string): Promise<Received> {
  await settle(env);
  const m = mx.received.find((x) => x.to.includes(to));
  if (!m) throw new Error(`nothing received for ${to}`);
  return m;
}

const PENDING = "status IN ('QUEUED', 'SENDING') AND (lease_until IS NOT NULL OR next_attempt_at <= ?)";

/**
 * Lets the engine work through everything due now: pokes it and waits (real
 * sockets, bounded) until no recipient is leased or due.
 */
export async function settle(env: TestEnv): Promise<void> {
  const engine = env.app.delivery();
  for (let i = 0; i < 400; i++) {
    await engine.poke();
    const now = new Date(env.clock.now()).toISOString();
    if (engine.inflightCount() === 0 && (await count(env, 'recipients', PENDING, now)) === 0) return;
    await sleep(25);
  }
  throw new Error('delivery did not settle within 10 s');
}

export interface DeliveryEnv {
  env: TestEnv;
  key: string;
  send(to: string[], extra?: Record<string, unknown>): Promise<string>;
  email(id: string): Promise<Record<string, any>>;
  recipients(id: string): Promise<Record<string, any>[]>;
  events(id: string): Promise<Record<string, any>[]>;
}

/** A test env with a verified signing domain `sender.test`, a LIVE key and a started delivery engine. */
export async function startDeliveryEnv(
  dns: DnsServer,
  settings: Partial<ConfigInput>,
  logger?: Logger,
  overrides: { mtaStsPort?: number; webhookCa?: string[] } = {},
): Promise<DeliveryEnv> {
  const env = await createTestEnv(
    {
      dnsServers: dns.server,
      hostname: 'mta.svc.test',
      deliveryRetrySchedule: '1m,5m',
      deliveryMaxAge: '1h',
      workers: '1',
      ...settings,
    },
    'UNLIMITED',
    { ...(logger ? { logger } : {}), ...overrides },
  );
  await addSigningDomain(env, dns, 'sender.test');
  const key = await env.key({ env: 'LIVE' });
  await env.app.delivery().start();
  return {
    env,
    key,
    async send(to, extra = {}) {
      const res = await env.server.inject({
        method: 'POST',
        url: '/v1/emails',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          from: 'news@sender.test',
          to,
          subject: 'Hello',
          text: 'Hi there',
          html: '<p>Hi there</p>',
          ...extra,
        },
      });
      if (res.statusCode !== 202) throw new Error(`send failed: ${res.statusCode} ${res.body}`);
      return res.json().data.id as string;
    },
    email: async (id) =>
      (
        await env.query<Record<string, any>>(
          'SELECT e.*, b.html_body, b.text_body FROM emails e LEFT JOIN email_bodies b ON b.email_seq = e.seq WHERE e.id = ?',
          id,
        )
      )[0]!,
    recipients: (id) =>
      env.query<Record<string, any>>(
        'SELECT r.* FROM recipients r JOIN emails e ON e.seq = r.email_seq WHERE e.id = ? ORDER BY r.id',
        id,
      ),
    events: async (id) =>
      (
        await env.query<{ type: string; data: string }>(
          'SELECT type, data FROM email_events ev JOIN emails e ON e.seq = ev.email_seq WHERE e.id = ? ORDER BY ev.seq',
          id,
        )
      ).map((e) => ({ type: e.type, ...JSON.parse(e.data) })),
  };
}

/** A loopback DNS server and an MX peer for `domains` (each `mx.<domain>` at 127.0.0.1). */
export async function startDestinations(domains: string[] = ['dest.test']): Promise<{ dns: DnsServer; mx: MxPeer }> {
  const dns = await startDnsServer();
  const mx = await startMxPeer();
  for (const domain of domains) {
    dns.set(domain, { MX: [{ exchange: `mx.${domain}`, priority: 10 }] });
    dns.set(`mx.${domain}`, { A: ['127.0.0.1'] });
  }
  return { dns, mx };
}

/** A delivery env with the test MX at dest.test and a webhook to a real HTTPS receiver for `events`. */
export interface HookedDelivery {
  dns: DnsServer;
  mx: MxPeer;
  d: DeliveryEnv;
  hooks: WebhookReceiver;
  close(this: void): Promise<void>;
}

export async function startHookedDelivery(
  events: string[],
  settings: Partial<ConfigInput> = {},
): Promise<HookedDelivery> {
  const dns = await startDnsServer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  dns.set('hook.test', { A: ['127.0.0.1'] });
  const mx = await startMxPeer();
  const hooks = await startWebhookReceiver();
  const d = await startDeliveryEnv(
    dns,
    { mxPort: String(mx.port), allowInsecureWebhooks: true, ...settings },
    undefined,
    { webhookCa: [hooks.ca] },
  );
  await d.env.app.webhooks.create(d.env.init.project_id, { url: `https://hook.test:${hooks.port}/svc`, events });
  return {
    dns,
    mx,
    d,
    hooks,
    close: async () => {
      await d.env.close();
      await hooks.close();
      await mx.close();
      await dns.close();
    },
  };
}

/** svc's inbound MX for `env`'s app, listening on a loopback port of its own. */
export async function listenInbound(env: TestEnv): Promise<{ inbound: InboundListener; port: number }> {
  const inbound = createInboundListener(env.app, {
    host: '127.0.0.1',
    port: 0,
    maxSessions: 10,
    idleTimeoutMs: 10_000,
    closeTimeoutMs: 50,
  });
  return { inbound, port: await inbound.listen() };
}

/** One message to `rcpt` on port `port`, with the null sender as bounces come; the replies to RCPT and to the dot. */
export async function mailNullSender(
  port: number,
  rcpt: string,
  body: string,
): Promise<{ rcpt: string; data: string }> {
  const s = await smtpTalk(port);
  try {
    await s.reply();
    await s.send('EHLO mx.dest.test');
    await s.send('MAIL FROM:<>');
    const rcptReply = await s.send(`RCPT TO:<${rcpt}>`);
    if (!rcptReply.startsWith('250')) return { rcpt: rcptReply, data: '' };
    await s.send('DATA');
    s.write(`${body.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..')}\r\n.\r\n`);
    return { rcpt: rcptReply, data: await s.reply() };
  } finally {
    s.close();
  }
}

/** Where bounces come back: a delivery env with the test MX at `domains`, and svc's inbound MX listening. */
export interface BounceEnv {
  dns: DnsServer;
  mx: MxPeer;
  d: DeliveryEnv;
  /** The inbound MX's port. */
  port: number;
  close(this: void): Promise<void>;
}

export async function startBounceEnv(domains: string[]): Promise<BounceEnv> {
  const { dns, mx } = await startDestinations(domains);
  const d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
  const { inbound, port } = await listenInbound(d.env);
  return {
    dns,
    mx,
    d,
    port,
    async close() {
      await inbound.close();
      await d.env.close();
      await mx.close();
      await dns.close();
    },
  };
}
