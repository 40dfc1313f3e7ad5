import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StoredStsPolicy } from '../src/delivery/store.ts';
import {
  createMtaStsCache,
  createStoredStsPolicies,
  fetchPolicy,
  judgeMx,
  mxMatches,
  parsePolicy,
  parseStsRecord,
  RECHECK_MS,
} from '../src/delivery/mta-sts.ts';
import { createResolver } from '../src/delivery/mx.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { makeCertificate } from './peers/certificates.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

// A real HTTPS policy server on loopback (its certificate signed by a test CA) and the loopback
// DNS server serving _mta-sts TXT records and the policy host's address: each RFC 8461 rule.

interface Answer {
  status?: number;
  type?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Never answer (the fetch must time out). */
  hang?: boolean;
}

const POLICY =
  'version: STSv1\r\nmode: enforce\r\nmx: mx1.example.test\r\nmx: *.mail.example.test\r\nmax_age: 86400\r\n';
const DOMAIN = 'example.test';

let dns: DnsServer;
let server: Server;
let port: number;
let ca: string;
let answer: Answer;
let hits: string[];
let arrived: () => void;

beforeAll(async () => {
  dns = await startDnsServer();
  const tls = await makeCertificate({ names: [`mta-sts.${DOMAIN}`, 'mta-sts.other.test'] });
  ca = tls.ca;
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    hits.push(`${req.headers.host ?? ''}${req.url ?? ''}`);
    arrived();
    if (answer.hang) return;
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'text/plain', ...answer.headers });
    res.end(answer.body ?? POLICY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await dns.close();
});

beforeEach(() => {
  answer = {};
  hits = [];
  arrived = () => undefined;
  for (const d of [DOMAIN, 'other.test']) {
    dns.set(`_mta-sts.${d}`, { TXT: ['v=STSv1; id=20261128T1'] });
    dns.set(`mta-sts.${d}`, { A: ['127.0.0.1'] });
  }
});

const setup = () => {
  const clock = new FakeClock('2026-11-28T12:00:00Z');
  const opts = { resolver: createResolver([dns.server]), clock, ca: [ca], port };
  return { clock, opts, cache: createMtaStsCache({ ...opts, recheckMs: 0 }) };
};

describe('policy file and record (pure)', () => {
  it('reads a valid policy, LF or CRLF, and caps max_age at 31557600', () => {
    expect(parsePolicy(POLICY)).toEqual({
      ok: true,
      value: { mode: 'enforce', mx: ['mx1.example.test', '*.mail.example.test'], maxAge: 86400 },
    });
    const long = parsePolicy('version: STSv1\nmode: testing\nmx: mx.example.test\nmax_age: 99999999\n');
    expect(long).toMatchObject({ ok: true, value: { mode: 'testing', maxAge: 31_557_600 } });
  });

  it('refuses a wrong version, an unknown mode, a missing max_age or no mx', () => {
    expect(parsePolicy(POLICY.replace('STSv1', 'STSv2'))).toMatchObject({ ok: false });
    expect(parsePolicy(POLICY.replace('enforce', 'strict'))).toMatchObject({ ok: false });
    expect(parsePolicy(POLICY.replace('max_age: 86400', 'max_age: -1'))).toMatchObject({ ok: false });
    expect(parsePolicy('version: STSv1\nmode: enforce\nmax_age: 60\n')).toMatchObject({
      ok: false,
      reason: 'policy names no mx',
    });
    expect(parsePolicy('version: STSv1\nmode: none\nmax_age: 60\n')).toMatchObject({
      ok: true,
      value: { mode: 'none' },
    });
  });

  it('takes the id of exactly one v=STSv1 record', () => {
    expect(parseStsRecord(['v=spf1 -all', 'v=STSv1; id=abc123'])).toEqual({ ok: true, value: { id: 'abc123' } });
    expect(parseStsRecord(['v=STSv1; id=a', 'v=STSv1; id=b'])).toMatchObject({ ok: false });
    expect(parseStsRecord(['v=STSv1; id=not-alnum!'])).toMatchObject({ ok: false });
    expect(parseStsRecord([])).toMatchObject({ ok: false });
  });

  it('matches a *. pattern against exactly one leftmost label', () => {
    expect(mxMatches('*.mail.example.test', 'a.mail.example.test')).toBe(true);
    expect(mxMatches('*.mail.example.test', 'A.Mail.Example.Test.')).toBe(true);
    expect(mxMatches('*.mail.example.test', 'mail.example.test')).toBe(false);
    expect(mxMatches('*.mail.example.test', 'a.b.mail.example.test')).toBe(false);
    expect(mxMatches('mx1.example.test', 'mx1.example.test')).toBe(true);
    expect(mxMatches('mx1.example.test', 'mx2.example.test')).toBe(false);
  });

  it('enforce allows named hosts with TLS required and defers others with a reason; testing reports; none asks nothing', () => {
    const enforce = { mode: 'enforce' as const, mx: ['*.mail.example.test'], maxAge: 60 };
    expect(judgeMx(DOMAIN, enforce, 'in.mail.example.test')).toEqual({ allowed: true, requireTls: true });
    const refused = judgeMx(DOMAIN, enforce, 'evil.attacker.test');
    expect(refused).toMatchObject({ allowed: false, requireTls: true });
    expect(refused.reason).toContain('does not name MX evil.attacker.test');
    const testing = judgeMx(DOMAIN, { ...enforce, mode: 'testing' }, 'evil.attacker.test');
    expect(testing).toMatchObject({ allowed: true, requireTls: false });
    expect(testing.reason).toContain('(testing)');
    expect(judgeMx(DOMAIN, { ...enforce, mode: 'none' }, 'evil.attacker.test')).toEqual({
      allowed: true,
      requireTls: false,
    });
    expect(judgeMx(DOMAIN, undefined, 'anything.test')).toEqual({ allowed: true, requireTls: false });
  });
});

describe('policy fetch over HTTPS', () => {
  it('fetches a valid policy from mta-sts.<domain>/.well-known/mta-sts.txt', async () => {
    const { opts } = setup();
    expect(await fetchPolicy(DOMAIN, opts)).toMatchObject({ ok: true, value: { mode: 'enforce', maxAge: 86400 } });
    expect(hits).toEqual([`mta-sts.${DOMAIN}:${port}/.well-known/mta-sts.txt`]);
  });

  it('reads testing and none modes', async () => {
    const { opts } = setup();
    answer = { body: POLICY.replace('enforce', 'testing') };
    expect(await fetchPolicy(DOMAIN, opts)).toMatchObject({ ok: true, value: { mode: 'testing' } });
    answer = { body: 'version: STSv1\r\nmode: none\r\nmax_age: 600\r\n' };
    expect(await fetchPolicy(DOMAIN, opts)).toMatchObject({ ok: true, value: { mode: 'none', mx: [] } });
  });

  it('refuses a redirect without following it', async () => {
    const { opts } = setup();
    answer = { status: 301, headers: { location: `https://mta-sts.other.test:${port}/.well-known/mta-sts.txt` } };
    const r = await fetchPolicy(DOMAIN, opts);
    expect(r).toMatchObject({ ok: false });
    expect(!r.ok && r.reason).toContain('redirect (301)');
    expect(hits).toHaveLength(1);
  });

  it('refuses a body over 64 KB, declared or streamed', async () => {
    const { opts } = setup();
    answer = { body: POLICY + `x: ${'y'.repeat(70 * 1024)}\r\n` };
    const r = await fetchPolicy(DOMAIN, opts);
    expect(!r.ok && r.reason).toContain('larger than 65536');
    answer = { body: POLICY + `x: ${'y'.repeat(70 * 1024)}\r\n`, headers: { 'transfer-encoding': 'chunked' } };
    const streamed = await fetchPolicy(DOMAIN, opts);
    expect(!streamed.ok && streamed.reason).toContain('larger than 65536');
  });

  it('refuses a media type other than text/plain', async () => {
    const { opts } = setup();
    answer = { type: 'text/html' };
    const r = await fetchPolicy(DOMAIN, opts);
    expect(!r.ok && r.reason).toContain('text/html, not text/plain');
    answer = { type: 'text/plain; charset=utf-8' };
    expect(await fetchPolicy(DOMAIN, opts)).toMatchObject({ ok: true });
  });

  it('gives up when the server does not answer by the deadline', async () => {
    const { clock, opts } = setup();
    answer = { hang: true };
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const pending = fetchPolicy(DOMAIN, { ...opts, timeoutMs: 5000 });
    await reached;
    clock.advance(5000);
    expect(await pending).toEqual({ ok: false, reason: 'policy fetch timed out' });
  });

  it('refuses a certificate that the trusted CAs did not sign', async () => {
    const { opts } = setup();
    const r = await fetchPolicy(DOMAIN, { ...opts, ca: [] });
    expect(r).toMatchObject({ ok: false });
    expect(hits).toHaveLength(0);
  });

  it('refuses a certificate for another name', async () => {
    const { opts } = setup();
    dns.set('_mta-sts.wrong.test', { TXT: ['v=STSv1; id=1'] });
    dns.set('mta-sts.wrong.test', { A: ['127.0.0.1'] });
    const r = await fetchPolicy('wrong.test', opts);
    expect(!r.ok && r.reason).toContain('altnames');
    expect(hits).toHaveLength(0);
  });
});

describe('policy cache', () => {
  it('no TXT record means no policy, and nothing is fetched', async () => {
    const { cache } = setup();
    dns.remove(`_mta-sts.${DOMAIN}`);
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'none' });
    expect(hits).toHaveLength(0);
  });

  it('keeps the policy while the id holds and refetches when the id changes', async () => {
    const { cache } = setup();
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'fetched', id: '20261128T1' });
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'cached', policy: { mode: 'enforce' } });
    expect(hits).toHaveLength(1);
    dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=20261128T2'] });
    answer = { body: POLICY.replace('enforce', 'testing') };
    expect(await cache.policyFor(DOMAIN)).toMatchObject({
      source: 'fetched',
      id: '20261128T2',
      policy: { mode: 'testing' },
    });
    expect(hits).toHaveLength(2);
  });

  it('refetches once max_age has passed', async () => {
    const { clock, cache } = setup();
    await cache.policyFor(DOMAIN);
    clock.advance(86_399_000);
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'cached' });
    clock.advance(1000);
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'fetched' });
    expect(hits).toHaveLength(2);
  });

  it('a policy server that is down, or a failed TXT lookup, leaves the cached policy in force', async () => {
    const { cache } = setup();
    await cache.policyFor(DOMAIN);
    dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=20261128T3'] });
    answer = { status: 503 };
    const down = await cache.policyFor(DOMAIN);
    expect(down).toMatchObject({ source: 'cached', id: '20261128T1', policy: { mode: 'enforce' } });
    expect(down.problem).toContain('503');
    dns.set(`_mta-sts.${DOMAIN}`, { rcode: 'SERVFAIL' });
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'cached', policy: { mode: 'enforce' } });
  });

  it('an expired policy does not apply when the server is down', async () => {
    const { clock, cache } = setup();
    await cache.policyFor(DOMAIN);
    clock.advance(86_400_000);
    answer = { status: 503 };
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ source: 'none', problem: 'policy server answered 503' });
  });
});

describe('the recheck interval', () => {
  it("reuses a domain's last answer for RECHECK_MS, then asks the TXT record again", async () => {
    const { clock, opts } = setup();
    const cache = createMtaStsCache(opts);
    dns.set('_mta-sts.other.test', { rcode: 'NXDOMAIN' });
    await cache.policyFor(DOMAIN);
    await cache.policyFor('other.test');
    const asked = () => dns.queries.filter((q) => q.includes('_mta-sts.')).length;
    const before = asked();
    dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=20261128T2'] });
    answer = { body: POLICY.replace('enforce', 'testing') };
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ id: '20261128T1', policy: { mode: 'enforce' } });
    expect(await cache.policyFor('other.test')).toMatchObject({ source: 'none' });
    expect(asked()).toBe(before);
    clock.advance(RECHECK_MS);
    expect(await cache.policyFor(DOMAIN)).toMatchObject({ id: '20261128T2', policy: { mode: 'testing' } });
    expect(asked()).toBe(before + 1);
  });
});

describe('policies kept across a restart', () => {
  it('a restarted server applies the policy it fetched before, with the record and the policy host blocked', async () => {
    const { clock, opts } = setup();
    const kept = new Map<string, StoredStsPolicy>();
    const store = {
      saveStsPolicy: (p: StoredStsPolicy) => Promise.resolve(void kept.set(p.domain, p)),
      stsPolicies: (now: number) => Promise.resolve([...kept.values()].filter((p) => Date.parse(p.expires_at) > now)),
    };
    const warn = () => undefined;
    const before = createStoredStsPolicies({ ...opts, recheckMs: 0, store, warn });
    expect(await before.policyFor(DOMAIN)).toMatchObject({ policy: { id: '20261128T1', mode: 'enforce' } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(kept.get(DOMAIN)).toMatchObject({ policy_id: '20261128T1', mode: 'enforce', max_age: 86400 });

    // After the restart an attacker blocks the TXT record and the policy host: enforce still applies.
    dns.set(`_mta-sts.${DOMAIN}`, { rcode: 'SERVFAIL' });
    answer = { status: 503 };
    clock.advance(3_600_000);
    const after = createStoredStsPolicies({ ...opts, recheckMs: 0, store, warn });
    expect(await after.policyFor(DOMAIN)).toMatchObject({
      policy: { id: '20261128T1', mode: 'enforce', mx: ['mx1.example.test', '*.mail.example.test'] },
      published: false,
    });
    expect(hits).toHaveLength(1);

    // Once max_age has passed since the fetch, the kept policy is not read back.
    clock.advance(86_400_000);
    const later = createStoredStsPolicies({ ...opts, recheckMs: 0, store, warn });
    expect(await later.policyFor(DOMAIN)).toMatchObject({ policy: null });
  });
});
