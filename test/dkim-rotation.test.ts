import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Domain } from '../src/domains/index.ts';
import { captureLogger, checkOf, createDomainsEnv, publish, type DomainsEnv } from './domains-helpers.ts';
import { caller, codeOf, login, MEMBER_PASSWORD, signInMembers } from './management-helpers.ts';

/**
 * Issue 28 item 5: `rotate-dkim` makes a new key under a new selector; svc signs with the
 * current key until a check sees the new record, then switches; the old record stays listed
 * as retiring for the grace period, then is reported as removable. Every step is audited
 * (never a private key) and logged. Runs on both stores.
 */
const DAY = 86_400_000;
let t: DomainsEnv;
const { logger, lines } = captureLogger();
let call: ReturnType<typeof caller>;
let tokens: Record<string, string>;

beforeAll(async () => {
  t = await createDomainsEnv('FREE', { dkimRotateMonths: '6' }, logger);
  tokens = await signInMembers(t.env, ['ADMIN', 'VIEWER']);
  call = caller(() => t.env, tokens);
  const { organization_id, project_id } = t.env.init;
  publish(
    t.dns,
    await t.env.app.domains.addDomain({ name: 'rot.test', organization: organization_id, project: project_id }),
  );
  expect((await t.env.app.domains.verifyDomain('rot.test')).status).toBe('VERIFIED');
});
afterAll(() => t?.close());

const signing = async () => (await t.env.app.domains.getSigningKey('rot.test'))!.selector;
const keys = (d: Domain) => d.dkim_keys.map((k) => [k.selector, k.state]);
const url = (d: Domain, tail = '') => `/v1/organizations/${t.env.init.organization_id}/domains/${d.id}${tail}`;
const audits = () =>
  t.env.query<{ action: string; actor_type: string; before: string | null; after: string }>(
    `SELECT action, actor_type, before, after FROM audit_logs WHERE action LIKE 'domain.dkim%' ORDER BY ${t.env.auditOrder}`,
  );

describe('a DKIM rotation', () => {
  let rotated: Domain;

  it('starts over the API (ADMIN; a VIEWER gets 403): a new selector, listed to publish, while the old key signs', async () => {
    const d = await t.env.app.domains.getDomain('rot.test');
    expect(d.dkim_selector).toBe('svc202603');
    expect(codeOf(await call('POST', url(d, '/rotate-dkim'), 'VIEWER'))).toBe('forbidden');
    const res = await call('POST', url(d, '/rotate-dkim'), 'ADMIN');
    expect(res.statusCode).toBe(201);
    rotated = res.json<{ data: Domain }>().data;
    // The month's selector is taken: the new one gets a suffix.
    expect(keys(rotated)).toEqual([
      ['svc202603', 'active'],
      ['svc202603-2', 'pending'],
    ]);
    expect(rotated.records.find((r) => r.purpose === 'dkim-next')).toMatchObject({
      type: 'TXT',
      name: 'svc202603-2._domainkey.rot.test',
      value: expect.stringMatching(/^v=DKIM1; k=rsa; p=/),
    });
    expect(await signing()).toBe('svc202603');
  });

  it('refuses a second rotation while the first waits for its record: 409 dkim_rotation_in_progress', async () => {
    const res = await call('POST', url(rotated, '/rotate-dkim'), 'ADMIN');
    expect(res.statusCode).toBe(409);
    expect(codeOf(res)).toBe('dkim_rotation_in_progress');
    await expect(t.env.app.domains.rotateDkim('rot.test')).rejects.toMatchObject({ code: 'dkim_rotation_in_progress' });
    expect(keys(await t.env.app.domains.getDomain('rot.test'))).toHaveLength(2);
  });

  it('keeps signing with the old key while the new record is missing, and says so; the domain stays verified', async () => {
    const d = await t.env.app.domains.verifyDomain('rot.test');
    expect(d.status).toBe('VERIFIED');
    expect(d.warning).toBeNull();
    expect(checkOf(d, 'dkim-next')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('svc signs with the current key'),
    });
    expect(await signing()).toBe('svc202603');
  });

  it('switches once a check sees the new record, keeping the old one listed as retiring for 7 days', async () => {
    const next = rotated.records.find((r) => r.purpose === 'dkim-next')!;
    t.dns.set(next.name, { TXT: [next.value] });
    t.env.clock.advance(DAY);
    // A check over the API: the switch is audited as the ADMIN who ran it (signed in anew: a day passed).
    tokens.ADMIN = await login(t.env, 'admin@example.com', MEMBER_PASSWORD);
    const res = await call('POST', url(rotated, '/verify'), 'ADMIN');
    expect(res.statusCode).toBe(201);
    const d = res.json<{ data: Domain }>().data;
    expect(keys(d)).toEqual([
      ['svc202603', 'retiring'],
      ['svc202603-2', 'active'],
    ]);
    expect(d.dkim_selector).toBe('svc202603-2');
    expect(d.dkim_keys[0]!.retire_after).toBe(new Date(t.env.clock.now() + 7 * DAY).toISOString());
    expect(d.records.filter((r) => r.purpose.startsWith('dkim')).map((r) => [r.name, r.purpose])).toEqual([
      ['svc202603._domainkey.rot.test', 'dkim-retiring'],
      ['svc202603-2._domainkey.rot.test', 'dkim'],
    ]);
    expect(await signing()).toBe('svc202603-2');
  });

  it('retires the old key after the grace period: its record is reported as removable, no longer required', async () => {
    t.env.clock.advance(7 * DAY - 1);
    expect(keys(await t.env.app.domains.verifyDomain('rot.test'))[0]).toEqual(['svc202603', 'retiring']);
    t.env.clock.advance(1);
    // The owner removes the old record: the domain stays verified.
    t.dns.set('svc202603._domainkey.rot.test', {});
    const d = await t.env.app.domains.verifyDomain('rot.test');
    expect(keys(d)[0]).toEqual(['svc202603', 'retired']);
    expect(d.status).toBe('VERIFIED');
    expect(d.records.find((r) => r.name === 'svc202603._domainkey.rot.test')?.purpose).toBe('dkim-retired');
    // The check that retired it looked the record up as retiring; the next one reports it as retired.
    expect(checkOf(await t.env.app.domains.verifyDomain('rot.test'), 'dkim-retired')).toMatchObject({
      ok: true,
      reason: expect.stringContaining('retired'),
    });
  });

  it("says a retired key's record could not be looked up when its lookup fails, not that it is gone", async () => {
    t.dns.set('svc202603._domainkey.rot.test', { rcode: 'SERVFAIL' });
    try {
      const d = await t.env.app.domains.verifyDomain('rot.test');
      expect(checkOf(d, 'dkim-retired')?.reason).toMatch(
        /^the key at svc202603\._domainkey\.rot\.test is retired; its record could not be looked up \(.+\)$/,
      );
      expect(d.status).toBe('VERIFIED');
    } finally {
      t.dns.set('svc202603._domainkey.rot.test', {});
    }
  });

  it('audits and logs every step, never with a private key', async () => {
    const rows = await audits();
    expect(rows.map((r) => [r.action, r.actor_type, JSON.parse(r.after).selector])).toEqual([
      ['domain.dkim_rotation_started', 'user', 'svc202603-2'],
      ['domain.dkim_key_activated', 'user', 'svc202603-2'],
      ['domain.dkim_key_retired', 'cli', 'svc202603'],
    ]);
    expect(JSON.parse(rows[1]!.before!)).toMatchObject({ selector: 'svc202603', state: 'retiring' });
    expect(JSON.stringify(rows)).not.toMatch(/PRIVATE KEY|private_key/);
    const logged = lines.filter((l) => /^DKIM/.test(String(l.msg))).map((l) => [l.msg, l.selector]);
    expect(logged).toEqual([
      [expect.stringContaining('rotation started'), 'svc202603-2'],
      [expect.stringContaining('seen published'), 'svc202603-2'],
      [expect.stringContaining('retired'), 'svc202603'],
    ]);
    expect(JSON.stringify(lines)).not.toContain('PRIVATE KEY');
  });

  it('starts on its own once the active key has signed --dkim-rotate-months, from the periodic check', async () => {
    expect((await t.env.app.domains.verifyAll()).rotated).toBe(0);
    t.env.clock.advance(183 * DAY);
    expect((await t.env.app.domains.verifyAll()).rotated).toBe(1);
    const d = await t.env.app.domains.getDomain('rot.test');
    expect(d.dkim_keys.filter((k) => k.state === 'pending').map((k) => k.selector)).toEqual(['svc202609']);
    expect(await signing()).toBe('svc202603-2');
  });
});
