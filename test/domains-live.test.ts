import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDomainChecks } from '../src/domains/index.ts';
import { call, email } from './http-helpers.ts';
import { captureLogger, checkOf, createDomainsEnv, publish, type DomainsEnv } from './domains-helpers.ts';

// Verified domains bound to a project accept LIVE sends; records failing through
// the grace period unverify the domain (issue 3, "Bad input and faults").

let t: DomainsEnv;
afterEach(() => t.close());

const H = 3_600_000;
const FROM = 'news@example.com';

/** example.com added, published, verified and bound to the init project; a LIVE key of that project. */
async function verifiedEnv(settings: Record<string, string> = {}, logger = captureLogger()) {
  t = await createDomainsEnv('FREE', settings, logger.logger);
  const d = await t.env.app.domains.addDomain({ name: 'example.com', organization: 'Acme' });
  publish(t.dns, d);
  expect((await t.env.app.domains.verifyDomain('example.com')).status).toBe('VERIFIED');
  const key = await t.env.key({ env: 'LIVE' });
  return { d, key, lines: logger.lines };
}

/** A LIVE send a second later (FREE allows one request per second per key). */
const send = (key: string) => {
  t.env.clock.advance(1000);
  return call(t.env, key, { body: email({ from: FROM }) });
};
const verifyNow = () => t.env.app.domains.verifyDomain('example.com');

describe('LIVE sends from a domain', () => {
  it('are accepted (202 QUEUED) once the verified domain is bound to the project, not before', async () => {
    const { key } = await verifiedEnv();
    const before = await send(key);
    expect(before.statusCode).toBe(422);
    expect(before.json().error).toMatchObject({ code: 'domain_not_verified', details: { domain: 'example.com' } });
    const bound = await t.env.app.domains.bindDomain('example.com', 'Web');
    expect(bound.project_ids).toEqual([t.env.init.project_id]);
    const res = await send(key);
    expect(res.statusCode).toBe(202);
    expect(res.json().data.status).toBe('QUEUED');
    await t.env.app.domains.unbindDomain('example.com', 'Web');
    expect((await send(key)).statusCode).toBe(422);
  });

  it('are refused with domain_not_verified for a bound domain that is still PENDING', async () => {
    t = await createDomainsEnv();
    await t.env.app.domains.addDomain({ name: 'example.com', organization: 'Acme', project: 'Web' });
    const res = await send(await t.env.key({ env: 'LIVE' }));
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('domain_not_verified');
  });
});

describe('grace period', () => {
  it('keeps a domain whose DKIM record vanished VERIFIED with a warning for 71 h, then unverifies it', async () => {
    const { d, key, lines } = await verifiedEnv();
    await t.env.app.domains.bindDomain('example.com', 'Web');
    t.dns.remove(d.records[0]!.name);
    t.env.clock.advance(H);
    const since = new Date(t.env.clock.now()).toISOString();
    for (let h = 0; h <= 71; h++) {
      const v = await verifyNow();
      expect(v).toMatchObject({ status: 'VERIFIED', failing_since: since });
      expect(v.warning).toContain('DKIM: TXT svc202603._domainkey.example.com does not exist (NXDOMAIN)');
      expect(v.warning).toContain('becomes unverified at 2026-03-18T13:00:00.000Z');
      if (h < 71) t.env.clock.advance(H);
    }
    expect((await send(key)).statusCode).toBe(202); // (a second later)
    t.env.clock.advance(H - 1000);
    const failed = await verifyNow();
    expect(failed).toMatchObject({ status: 'FAILED', failing_since: since });
    expect(failed.warning).toMatch(/^unverified at 2026-03-18T13:00:00.000Z: records failing since/);
    expect((await t.env.app.domains.getDomain('example.com')).warning).toBe(failed.warning);
    expect(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.domain])).toEqual([
      ['domain records failing: it becomes unverified if they stay so through the grace period', 'example.com'],
      ['domain unverified: its DKIM or SPF record failed through the grace period', 'example.com'],
    ]);
    const res = await send(key);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('domain_not_verified');
    expect(await t.env.app.domains.getSigningKey('example.com')).toBeUndefined();
  });

  it('re-verifies and clears the warning when the records come back', async () => {
    const { d } = await verifiedEnv({ domainGracePeriod: '1h' });
    t.dns.remove(d.records[0]!.name);
    await verifyNow();
    t.env.clock.advance(H);
    expect((await verifyNow()).status).toBe('FAILED');
    publish(t.dns, d);
    t.env.clock.advance(H);
    const back = await verifyNow();
    expect(back).toMatchObject({ status: 'VERIFIED', warning: null, failing_since: null });
    expect(back.verified_at).toBe(new Date(t.env.clock.now()).toISOString());
  });

  it('never unverifies on one failed lookup, even with a zero grace period', async () => {
    const { d } = await verifiedEnv({ domainGracePeriod: '0s' });
    t.dns.merge('bounces.example.com', { TXT: ['v=spf1 -all'] });
    const once = await verifyNow();
    expect(once.status).toBe('VERIFIED');
    expect(once.warning).toContain(`SPF: the SPF record does not authorise`);
    publish(t.dns, d);
    expect(await verifyNow()).toMatchObject({ status: 'VERIFIED', warning: null });
  });

  it('does not count SERVFAIL as a missing record, however long it lasts', async () => {
    const { d, key } = await verifiedEnv();
    await t.env.app.domains.bindDomain('example.com', 'Web');
    t.dns.set(d.records[0]!.name, { rcode: 'SERVFAIL' });
    for (let h = 0; h < 100; h += 10) {
      t.env.clock.advance(10 * H);
      const v = await verifyNow();
      expect(v).toMatchObject({ status: 'VERIFIED', warning: null, failing_since: null });
      expect(checkOf(v, 'dkim').reason).toContain('SERVFAIL');
    }
    expect((await send(key)).statusCode).toBe(202);
  });
});

describe('periodic checks', () => {
  it('verify every domain at start and every interval, and stop when told', async () => {
    t = await createDomainsEnv('FREE', { domainGracePeriod: '1h' });
    const d = await t.env.app.domains.addDomain({ name: 'example.com', organization: 'Acme' });
    publish(t.dns, d);
    const { logger, lines } = captureLogger();
    const checks = startDomainChecks({ service: t.env.app.domains, clock: t.env.clock, logger, intervalMs: H });
    const status = async () => (await t.env.app.domains.getDomain('example.com')).status;
    // A pass still going when the next is due is not doubled (lib/periodic.ts): the clock moves
    // on only once the pass before has ended, not as soon as its first write shows.
    const passes = () => lines.filter((l) => l.msg === 'domain checks done').length;
    t.env.clock.advance(0);
    await vi.waitFor(async () => expect(await status()).toBe('VERIFIED'));
    await vi.waitFor(() => expect(passes()).toBe(1));
    t.dns.remove(d.records[0]!.name);
    for (let i = 0; i < 2; i++) {
      t.env.clock.advance(H);
      const now = new Date(t.env.clock.now()).toISOString();
      await vi.waitFor(async () =>
        expect((await t.env.app.domains.getDomain('example.com')).last_checked_at).toBe(now),
      );
      await vi.waitFor(() => expect(passes()).toBe(i + 2));
    }
    expect(await status()).toBe('FAILED');
    await checks.stop();
    publish(t.dns, d);
    t.env.clock.advance(10 * H);
    expect(await status()).toBe('FAILED');
  });
});

describe('periodic checks on several nodes', () => {
  it('skip a pass while another node runs one, and run the next they get', async () => {
    t = await createDomainsEnv('FREE');
    const d = await t.env.app.domains.addDomain({ name: 'example.com', organization: 'Acme' });
    publish(t.dns, d);
    const { logger, lines } = captureLogger();
    let otherNodeRuns = true;
    const checks = startDomainChecks({
      service: t.env.app.domains,
      clock: t.env.clock,
      logger,
      intervalMs: H,
      // As Store.runExclusive answers: false when another node holds the job's lock.
      exclusive: async (run) => (otherNodeRuns ? false : (await run(), true)),
    });
    t.env.clock.advance(0);
    await vi.waitFor(() => expect(lines.map((l) => l.msg)).toContain('domain checks skipped: another node runs them'));
    expect(t.dns.queries).toEqual([]);
    expect((await t.env.app.domains.getDomain('example.com')).status).toBe('PENDING');
    otherNodeRuns = false;
    t.env.clock.advance(H);
    await vi.waitFor(async () => expect((await t.env.app.domains.getDomain('example.com')).status).toBe('VERIFIED'));
    await checks.stop();
  });
});

describe('stopping the periodic checks', () => {
  it('cancels a lookup in flight at once and records nothing of the check it cut short', async () => {
    t = await createDomainsEnv('FREE');
    const d = await t.env.app.domains.addDomain({ name: 'example.com', organization: 'Acme' });
    publish(t.dns, d);
    // The DKIM record's server never answers: the resolver would wait 2 × 2 s.
    t.dns.set(d.records[0]!.name, { silent: true });
    const { logger, lines } = captureLogger();
    const checks = startDomainChecks({ service: t.env.app.domains, clock: t.env.clock, logger, intervalMs: H });
    t.env.clock.advance(0);
    await vi.waitFor(() => expect(t.dns.queries).toContain(`TXT ${d.records[0]!.name}`));
    const stopped = await Promise.race([
      checks.stop().then(() => 'stopped'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting on DNS'), 1000)),
    ]);
    expect(stopped).toBe('stopped');
    expect((await t.env.app.domains.getDomain('example.com')).last_checked_at).toBeNull();
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    // Stopped for good: the next interval starts no run.
    const asked = t.dns.queries.length;
    t.env.clock.advance(2 * H);
    expect(t.dns.queries.length).toBe(asked);
  });
});
