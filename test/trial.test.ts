import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { count, createTestEnv, type TestEnv } from './harness.ts';
import { signingDomainRows } from './signing-domain.ts';
import { settle, verifyDkim, SELECTOR } from './delivery-helpers.ts';
import type { ConfigInput } from '../src/config/schema.ts';

// The onboarding trial (decisions.md "Sending"; docs/decisions.md "Onboarding trial and resend"):
// with a sandbox domain configured, a LIVE key sends one real email per project from that
// domain, without a verified domain of its own, only to the key creator's address.

const SANDBOX = 'try.svc.test';
const OWNER = 'owner@example.com';

let dns: DnsServer;
let mx: MxPeer;
let env: TestEnv;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  dns.set('example.com', { MX: [{ exchange: 'mx.example.com', priority: 10 }] });
  dns.set('mx.example.com', { A: ['127.0.0.1'] });
});
afterEach(() => env.close());
afterAll(async () => {
  await mx.close();
  await dns.close();
});

/** A test env whose server has the sandbox domain (or `settings` say otherwise). */
async function setup(settings: Partial<ConfigInput> = { sandboxDomain: SANDBOX }): Promise<void> {
  env = await createTestEnv({
    dnsServers: dns.server,
    mxPort: String(mx.port),
    hostname: 'mta.svc.test',
    workers: '1',
    ...settings,
  });
}

/**
 * The operator sets the sandbox domain up as a domain of the server (here in an organization
 * of its own): a verified domain whose DKIM key signs the trial emails.
 */
async function addSandboxDomain(): Promise<void> {
  const org = await env.app.accounts.createOrg({ name: 'Operator', owner_email: OWNER });
  const project = await env.app.accounts.createProject(org.id, { name: 'Ops' });
  const { publicKey: p, statements } = signingDomainRows({
    organizationId: org.id,
    projectId: project.id,
    name: SANDBOX,
    selector: SELECTOR,
    at: new Date(env.clock.now()).toISOString(),
  });
  for (const [sql, params] of statements) await env.query(sql, ...params);
  dns.set(`${SELECTOR}._domainkey.${SANDBOX}`, { TXT: [`v=DKIM1; k=rsa; p=${p}`] });
}

/** A key of the init project created by the owner (as POST …/api-keys records it). */
async function ownerKey(keyEnv: 'LIVE' | 'TEST' = 'LIVE'): Promise<string> {
  const k = await env.app.keys.createKey(
    env.init.project_id,
    { name: `owner-${keyEnv}-${await count(env, 'api_keys')}`, env: keyEnv },
    env.init.user_id,
  );
  return k.key!;
}

function send(key: string, payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${key}`, ...headers },
    payload: { from: `hello@${SANDBOX}`, to: [OWNER], subject: 'Your first email', text: 'It works', ...payload },
  });
}

const errorOf = (r: LightMyRequestResponse) => {
  const e = r.json<{ error: { code: string; details: Record<string, unknown> | null } }>().error;
  return [r.statusCode, e.code, e.details?.reason];
};
const trialEmails = () => count(env, 'emails', 'is_trial = 1');

describe('the onboarding trial', () => {
  it('delivers the first LIVE email from the sandbox domain to the key creator, DKIM-signed; the second is refused', async () => {
    await setup();
    await addSandboxDomain();
    const key = await ownerKey();
    await env.app.delivery().start();
    const before = mx.received.length;
    const first = await send(key);
    expect(first.statusCode).toBe(202);
    const id = first.json().data.id as string;
    expect(first.json().data).toMatchObject({ status: 'QUEUED', skipped_recipients: [] });
    await settle(env);
    const [row] = await env.query('SELECT * FROM emails WHERE id = ?', id);
    expect(row).toMatchObject({ status: 'DELIVERED', is_trial: 1, dkim_d: SANDBOX, dkim_signing_status: 'expected' });
    const got = mx.received.slice(before);
    expect(got.map((m) => m.to)).toEqual([[OWNER]]);
    expect(await verifyDkim(got[0]!.raw, dns)).toMatchObject({ status: 'pass', domain: SANDBOX });
    // Counted like any LIVE recipient.
    expect(
      await count(
        env,
        'usage_counters',
        "organization_id = ? AND period = '2026-03' AND count = 1",
        env.init.organization_id,
      ),
    ).toBe(1);

    expect(errorOf(await send(key))).toEqual([422, 'trial_restricted', 'trial_used']);
    // Another key of the same project: once per project, not per key.
    expect(errorOf(await send(await ownerKey()))).toEqual([422, 'trial_restricted', 'trial_used']);
    expect(await trialEmails()).toBe(1);
  });

  it('sends only to the key creator: another address, a cc or a key without a creator is refused', async () => {
    await setup();
    await addSandboxDomain();
    const key = await ownerKey();
    expect(errorOf(await send(key, { to: ['someone@example.com'] }))).toEqual([
      422,
      'trial_restricted',
      'recipient_not_key_creator',
    ]);
    expect(errorOf(await send(key, { cc: ['someone@example.com'] }))).toEqual([
      422,
      'trial_restricted',
      'recipient_not_key_creator',
    ]);
    // env.key() makes a key as the CLI does, with no user behind it.
    expect(errorOf(await send(await env.key({ env: 'LIVE' })))).toEqual([422, 'trial_restricted', 'no_key_creator']);
    // None of these used the trial; the address matches case-insensitively.
    expect((await send(key, { to: ['Owner@Example.com'] })).statusCode).toBe(202);
  });

  it('without a sandbox domain configured, a LIVE send from it is the usual domain_not_verified', async () => {
    await setup({});
    await addSandboxDomain();
    const r = await send(await ownerKey());
    expect(errorOf(r)).toEqual([422, 'domain_not_verified', undefined]);
    expect(r.json().error.details).toMatchObject({ domain: SANDBOX });
  });

  it('a sandbox domain the operator has not set up (no verified domain with a DKIM key) is domain_not_verified', async () => {
    await setup();
    const r = await send(await ownerKey());
    expect(errorOf(r)).toEqual([422, 'domain_not_verified', 'sandbox_domain_not_set_up']);
    expect(await count(env, 'emails')).toBe(0);
  });

  it('still needs the signed data-processing agreement', async () => {
    await setup();
    await addSandboxDomain();
    await env.query('UPDATE organizations SET dpa_accepted_at = NULL WHERE id = ?', env.init.organization_id);
    expect(errorOf(await send(await ownerKey()))).toEqual([422, 'dpa_not_signed', undefined]);
  });

  it('of concurrent trial sends, exactly one is accepted', async () => {
    await setup();
    await addSandboxDomain();
    const key = await ownerKey();
    const results = await Promise.all(Array.from({ length: 5 }, () => send(key)));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([202, 422, 422, 422, 422]);
    for (const r of results.filter((x) => x.statusCode === 422)) {
      expect(errorOf(r)).toEqual([422, 'trial_restricted', 'trial_used']);
    }
    expect(await trialEmails()).toBe(1);
    expect(await count(env, 'emails')).toBe(1);
  });

  it('an idempotent repeat of the trial send replays it; a TEST key does not use the trial', async () => {
    await setup();
    await addSandboxDomain();
    const test = await send(await ownerKey('TEST'), { to: ['anyone@example.com'] });
    expect(test.json().data.status).toBe('SIMULATED');
    expect(await trialEmails()).toBe(0);
    const key = await ownerKey();
    const first = await send(key, {}, { 'idempotency-key': 'trial-1' });
    const again = await send(key, {}, { 'idempotency-key': 'trial-1' });
    expect([first.statusCode, again.statusCode]).toEqual([202, 200]);
    expect(again.json()).toEqual(first.json());
    expect(await trialEmails()).toBe(1);
  });
});
