import { createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import type { WebhookReceiver } from './peers/webhook-receiver.ts';
import { receivedFor, settle, startHookedDelivery, type DeliveryEnv } from './delivery-helpers.ts';
import { publish } from './domains-helpers.ts';
import { headOf, oneClick } from './unsubscribe-helpers.ts';
import { readSuppressionCsv } from '../src/suppressions/index.ts';

// Events of a project's resources (issue 35, item 2; decisions.md, "Domain and suppression
// events"): a domain's verification changing and an address joining or leaving the suppression
// list, by every path that changes it, each a signed webhook to the webhooks that name it, and
// none to a webhook of `*` (the contract's email events).

const PUBLIC = 'https://mail.svc.test';
let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let hooks: WebhookReceiver;
let close: () => Promise<void> = async () => {};
let secret = '';
let pid = '';

beforeAll(async () => {
  ({ dns, mx, d, hooks, close } = await startHookedDelivery(
    ['suppression.added', 'suppression.removed', 'domain.verification_changed'],
    { domainGracePeriod: '1h', publicUrl: PUBLIC },
  ));
  pid = d.env.init.project_id;
  const [hook] = await d.env.app.webhooks.list(pid);
  secret = (await d.env.app.webhooks.rotateSecret(pid, hook!.id)).secret;
  await d.env.app.webhooks.create(pid, { url: `https://hook.test:${hooks.port}/all`, events: ['*'] });
  dns.set('mta.svc.test', { A: ['127.0.0.1'] });
}, 60_000);
afterAll(() => close());

interface Body {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, any>;
}

/** The resource events the subscribed webhook got since request `from`, once the dispatcher has run. */
async function eventsSince(from: number, want: number): Promise<Body[]> {
  const got = () => hooks.requests.slice(from).filter((r) => r.path === '/svc');
  await expect
    .poll(async () => {
      await d.env.app.webhookDispatcher().runOnce();
      return got().length;
    })
    .toBeGreaterThanOrEqual(want);
  for (const r of got()) {
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-service-signature']))!;
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${r.body}`).digest('hex'));
  }
  return got().map((r) => JSON.parse(r.body) as Body);
}

/** What the `*` webhook got that is not an email's event: nothing, ever. */
const nonEmailToStar = () =>
  hooks.requests.filter((r) => r.path === '/all').filter((r) => !String(JSON.parse(r.body).type).startsWith('email.'));

describe('suppression.added and suppression.removed', () => {
  it('by the API: an address added, added again (no event), imported beside a listed one, removed', async () => {
    const from = hooks.requests.length;
    await d.env.app.suppressions.add(pid, { email: 'Ada@Example.org' });
    await d.env.app.suppressions.add(pid, { email: 'ada@example.org', reason: 'COMPLAINT' });
    const csv = 'email,reason\nada@example.org,MANUAL\nbob@example.org,\n';
    const rows = readSuppressionCsv(Readable.from([Buffer.from(csv)]));
    expect(await d.env.app.suppressions.importRows(pid, rows)).toMatchObject({ imported: 2 });
    d.env.clock.advance(1000);
    await d.env.app.suppressions.remove(pid, 'ADA@example.org');
    const got = await eventsSince(from, 3);
    expect(got.map((b) => [b.type, b.data.suppression.email, b.data.suppression.reason])).toEqual([
      ['suppression.added', 'ada@example.org', 'MANUAL'],
      ['suppression.added', 'bob@example.org', 'MANUAL'],
      ['suppression.removed', 'ada@example.org', 'MANUAL'],
    ]);
    expect(got[0]).toMatchObject({
      id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      data: { project_id: pid, email_id: null },
    });
    expect(Date.parse(got[2]!.created_at)).toBe(Date.parse(got[0]!.created_at) + 1000);
    expect(got[2]!.data.suppression.created_at).toBe(got[0]!.data.suppression.created_at);
    expect(nonEmailToStar()).toEqual([]);
  });

  it('by a hard bounce: the event names the email that bounced', async () => {
    mx.behaviour.set('gone@dest.test', { rcpt: [550, '5.1.1 User unknown'] });
    const from = hooks.requests.length;
    const id = await d.send(['gone@dest.test']);
    await settle(d.env);
    const [added, ...more] = await eventsSince(from, 1);
    expect(more).toEqual([]);
    expect(added).toMatchObject({
      type: 'suppression.added',
      data: { project_id: pid, email_id: id, suppression: { email: 'gone@dest.test', reason: 'HARD_BOUNCE' } },
    });
    expect(nonEmailToStar()).toEqual([]);
  });

  it('by a one-click unsubscribe: once, naming the email', async () => {
    await d.env.app.accounts.updateProjectSettings(pid, { one_click_unsubscribe: true });
    const id = await d.send(['reader@dest.test']);
    const m = await receivedFor(d.env, mx, 'reader@dest.test');
    const token = new RegExp(`^<${PUBLIC}/u/([A-Za-z0-9_-]+)>$`).exec(headOf(m.raw)('List-Unsubscribe') ?? '')![1]!;
    const from = hooks.requests.length;
    expect((await oneClick(d.env, token)).statusCode).toBe(200);
    expect((await oneClick(d.env, token)).statusCode).toBe(200);
    const [added, ...more] = await eventsSince(from, 1);
    expect(added).toMatchObject({
      type: 'suppression.added',
      data: { email_id: id, suppression: { email: 'reader@dest.test', reason: 'UNSUBSCRIBE' } },
    });
    expect(more).toEqual([]);
  });
});

describe('domain.verification_changed', () => {
  it('on PENDING to VERIFIED, VERIFIED to FAILED past the grace period, FAILED to VERIFIED; not while it stays', async () => {
    const from = hooks.requests.length;
    const domains = d.env.app.domains;
    const dom = await domains.addDomain({ name: 'example.org', organization: 'Acme', project: 'Web' });
    expect((await domains.verifyDomain('example.org')).status).toBe('PENDING');
    publish(dns, dom);
    expect((await domains.verifyDomain('example.org')).status).toBe('VERIFIED');
    expect((await domains.verifyDomain('example.org')).status).toBe('VERIFIED');
    dns.remove(dom.records[0]!.name);
    await domains.verifyDomain('example.org');
    d.env.clock.advance(3_600_000);
    expect((await domains.verifyDomain('example.org')).status).toBe('FAILED');
    expect((await domains.verifyDomain('example.org')).status).toBe('FAILED');
    publish(dns, dom);
    expect((await domains.verifyDomain('example.org')).status).toBe('VERIFIED');

    const got = await eventsSince(from, 3);
    expect(got.map((b) => [b.type, b.data.domain.previous_status, b.data.domain.status])).toEqual([
      ['domain.verification_changed', 'PENDING', 'VERIFIED'],
      ['domain.verification_changed', 'VERIFIED', 'FAILED'],
      ['domain.verification_changed', 'FAILED', 'VERIFIED'],
    ]);
    expect(got[0]!.data.domain).toMatchObject({ id: dom.id, name: 'example.org', warning: null, failing_records: [] });
    expect(got[1]!.data.domain.warning).toMatch(/^unverified at /);
    expect(got[1]!.data.domain.failing_records).toEqual([
      {
        type: 'TXT',
        name: dom.records[0]!.name,
        purpose: 'dkim',
        reason: `TXT ${dom.records[0]!.name} does not exist (NXDOMAIN)`,
      },
    ]);
    expect(nonEmailToStar()).toEqual([]);
  });

  it('goes to the webhooks of every project the domain is bound to, and no other', async () => {
    const other = await d.env.app.accounts.createProject(d.env.init.organization_id, { name: 'Other' });
    const lonely = await d.env.app.accounts.createProject(d.env.init.organization_id, { name: 'Lonely' });
    const url = (p: string) => `https://hook.test:${hooks.port}/${p}`;
    await d.env.app.webhooks.create(other.id, { url: url('other'), events: ['domain.verification_changed'] });
    await d.env.app.webhooks.create(lonely.id, { url: url('lonely'), events: ['domain.verification_changed'] });
    const from = hooks.requests.length;
    const dom = await d.env.app.domains.addDomain({ name: 'both.example', organization: 'Acme', project: 'Web' });
    await d.env.app.domains.bindDomain('both.example', 'Other');
    publish(dns, dom);
    expect((await d.env.app.domains.verifyDomain('both.example')).status).toBe('VERIFIED');
    await eventsSince(from, 1);
    await expect
      .poll(async () => {
        await d.env.app.webhookDispatcher().runOnce();
        return hooks.requests
          .slice(from)
          .map((r) => r.path)
          .sort();
      })
      .toEqual(['/other', '/svc']);
  });
});
