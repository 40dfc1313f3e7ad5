import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitingLine } from '../src/delivery/index.ts';
import { RECHECK_MS } from '../src/delivery/mta-sts.ts';
import { makeCertificate } from './peers/certificates.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { startPolicyServer, type PolicyServer } from './peers/policy-server.ts';
import { settle, startDeliveryEnv, verifyDkim, type DeliveryEnv } from './delivery-helpers.ts';

// MTA-STS (RFC 8461) in delivery, end to end: the loopback DNS serves the _mta-sts records
// and MX hosts, a real HTTPS server (its CA trusted through --outbound-ca) serves policies, and
// two test MX hosts on one port: 127.0.0.1 with STARTTLS (a certificate per SNI name, one of
// them for the wrong name) and 127.0.0.2 with no STARTTLS at all (what a man in the middle who
// strips STARTTLS looks like).

const policyText = (mode: string, mx: string[], maxAge = 86400) =>
  `version: STSv1\r\nmode: ${mode}\r\n${mx.map((m) => `mx: ${m}\r\n`).join('')}max_age: ${maxAge}\r\n`;

let dns: DnsServer;
let policy: PolicyServer;
let tlsMx: MxPeer;
let plainMx: MxPeer;
let d: DeliveryEnv;

/** A domain with an MX host and, when `mode` is given, an MTA-STS record and policy. */
function domain(name: string, mxHost: string, mxIp: string, body?: { id: string; body: string }) {
  dns.set(name, { MX: [{ exchange: mxHost, priority: 10 }] });
  dns.set(mxHost, { A: [mxIp] });
  if (!body) return;
  dns.set(`_mta-sts.${name}`, { TXT: [`v=STSv1; id=${body.id}`] });
  dns.set(`mta-sts.${name}`, { A: ['127.0.0.1'] });
  policy.policies.set(`mta-sts.${name}`, body.body);
}

beforeAll(async () => {
  dns = await startDnsServer();
  // One CA (the test's trust anchor) and one certificate valid for the policy hosts and the
  // good MX hosts; mx.wrong.test presents it too, and it does not name mx.wrong.test.
  const cert = await makeCertificate({
    names: [
      ...['enf.test', 'wrongmx.test', 'plain.test', 'badcert.test', 'tst.test', 'moves.test'].map(
        (n) => `mta-sts.${n}`,
      ),
      'mx.good.test',
      'mx.evil.test',
    ],
  });
  const policyCert = cert;
  const good = { key: cert.key, cert: cert.cert };
  policy = await startPolicyServer(policyCert);
  tlsMx = await startMxPeer({
    tls: { key: good.key, cert: good.cert },
    sni: { 'mx.good.test': good, 'mx.evil.test': good, 'mx.wrong.test': good },
  });
  plainMx = await startMxPeer({ listen: { host: '127.0.0.2', port: tlsMx.port } });
  const dir = mkdtempSync(join(tmpdir(), 'svc-mta-sts-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, cert.ca);
  d = await startDeliveryEnv(
    dns,
    { mxPort: String(tlsMx.port), outboundCa: caFile, deliveryRetrySchedule: '1m,5m,15m' },
    undefined,
    { mtaStsPort: policy.port },
  );
});

afterAll(async () => {
  await d.env.close();
  await Promise.all([tlsMx.close(), plainMx.close(), dns.close()]);
  await policy.close();
});

beforeEach(() => {
  policy.fetches.length = 0;
});

async function deliver(to: string) {
  const id = await d.send([to]);
  await settle(d.env);
  const [r] = await d.recipients(id);
  return { id, r: r!, received: [...tlsMx.received, ...plainMx.received].filter((m) => m.to.includes(to)) };
}

describe('MTA-STS enforce', () => {
  it('delivers over verified TLS to a host the policy names, signed as always', async () => {
    domain('enf.test', 'mx.good.test', '127.0.0.1', { id: 'a1', body: policyText('enforce', ['mx.good.test']) });
    const { id, r, received } = await deliver('ann@enf.test');
    expect(r.status).toBe('DELIVERED');
    expect(received).toHaveLength(1);
    expect(received[0]!.secure).toBe(true);
    expect(policy.fetches).toEqual(['mta-sts.enf.test']);
    expect((await verifyDkim(received[0]!.raw, dns)).status).toBe('pass');
    const connected = (await d.events(id)).find((e) => e.type === 'smtp_connected');
    expect(connected).toMatchObject({ mx_host: 'mx.good.test', tls: true, tls_policy: 'mta-sts enforce' });
  });

  it('uses the cached policy while the id holds: no second fetch', async () => {
    const { r } = await deliver('bob@enf.test');
    expect(r.status).toBe('DELIVERED');
    expect(policy.fetches).toEqual([]);
  });

  it('defers (never bounces) mail for an MX host the policy does not name, and sends nothing', async () => {
    domain('wrongmx.test', 'mx.evil.test', '127.0.0.1', {
      id: 'b1',
      body: policyText('enforce', ['mx.good.test']),
    });
    const { id, r, received } = await deliver('cat@wrongmx.test');
    expect(r.status).toBe('QUEUED');
    // `svc emails show` says which policy holds the recipient back.
    const [q] = await d.env.app.explainQueue(id);
    expect(waitingLine(q!)).toMatch(/wrongmx\.test MTA-STS enforce \(policy b1, until 2026-03-16T12:00:00\.\d+Z\)/);
    expect(r.attempts).toBe(1);
    expect(r.last_error).toMatch(/MTA-STS policy of wrongmx\.test \(enforce\) names none of its MX hosts/);
    expect(received).toHaveLength(0);
  });

  it('defers rather than send in clear when the MX offers no STARTTLS (a stripping man in the middle)', async () => {
    domain('plain.test', 'mx.plain.test', '127.0.0.2', { id: 'c1', body: policyText('enforce', ['mx.plain.test']) });
    const { r, received } = await deliver('dan@plain.test');
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/requires TLS with a valid certificate for mx\.plain\.test/);
    expect(received).toHaveLength(0);
    expect(plainMx.received).toHaveLength(0);
  });

  it('defers when the certificate is for another name', async () => {
    domain('badcert.test', 'mx.wrong.test', '127.0.0.1', {
      id: 'd1',
      body: policyText('enforce', ['mx.wrong.test']),
    });
    const { r, received } = await deliver('eve@badcert.test');
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/requires TLS with a valid certificate for mx\.wrong\.test/);
    expect(received).toHaveLength(0);
  });
});

describe('MTA-STS testing mode', () => {
  it('delivers to a host the policy does not name, even in clear', async () => {
    domain('tst.test', 'mx.plain.test', '127.0.0.2', { id: 'e1', body: policyText('testing', ['mx.good.test']) });
    const { id, r, received } = await deliver('fay@tst.test');
    expect(r.status).toBe('DELIVERED');
    expect(received).toHaveLength(1);
    expect(received[0]!.secure).toBe(false);
    const connected = (await d.events(id)).find((e) => e.type === 'smtp_connected');
    expect(connected).toMatchObject({ mx_host: 'mx.plain.test', tls: false, tls_policy: 'mta-sts testing' });
  });
});

describe('a policy that changes, expires, or cannot be fetched', () => {
  it('refetches when the id changes and applies the new policy', async () => {
    domain('moves.test', 'mx.good.test', '127.0.0.1', { id: 'f1', body: policyText('enforce', ['mx.good.test']) });
    expect((await deliver('gus@moves.test')).r.status).toBe('DELIVERED');
    // The domain moves its mail elsewhere: a new id and a policy naming only the new host.
    domain('moves.test', 'mx.good.test', '127.0.0.1', { id: 'f2', body: policyText('enforce', ['mx.new.test']) });
    policy.fetches.length = 0;
    // The record is asked again once the domain's last answer is RECHECK_MS old.
    d.env.clock.advance(RECHECK_MS);
    const { r } = await deliver('hal@moves.test');
    expect(policy.fetches).toEqual(['mta-sts.moves.test']);
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/names none of its MX hosts/);
  });

  it('keeps applying the cached policy while the policy server is down (RFC 8461 5.1)', async () => {
    // A new id, and the policy host answers 503: the unexpired cached policy (f2) still applies.
    dns.set('_mta-sts.moves.test', { TXT: ['v=STSv1; id=f3'] });
    policy.policies.set('mta-sts.moves.test', 503);
    d.env.clock.advance(RECHECK_MS);
    const { r, received } = await deliver('ivy@moves.test');
    expect(policy.fetches).toEqual(['mta-sts.moves.test']);
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/names none of its MX hosts/);
    expect(received).toHaveLength(0);
  });

  it('keeps applying it when the record is gone too: blocking DNS does not turn enforce off', async () => {
    dns.remove('_mta-sts.moves.test');
    d.env.clock.advance(RECHECK_MS);
    const { r, received } = await deliver('kim@moves.test');
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/names none of its MX hosts/);
    expect(received).toHaveLength(0);
  });

  it('after max_age an expired policy no longer applies (no record: no policy)', async () => {
    d.env.clock.advance(86_401_000);
    const { r, received } = await deliver('joe@moves.test');
    expect(r.status).toBe('DELIVERED');
    expect(received).toHaveLength(1);
  });
});

describe('what the operator sees', () => {
  it('counts each attempt against its policy in svc_tls_sessions_total, failures by RFC 8460 type', async () => {
    const text = await d.env.app.metrics.registry.metrics();
    const count = (type: string, result: string) =>
      Number(
        new RegExp(`svc_tls_sessions_total\\{policy_type="${type}",result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
      );
    expect(count('sts', 'success')).toBeGreaterThanOrEqual(3);
    expect(count('sts', 'validation-failure')).toBeGreaterThanOrEqual(3);
    expect(count('sts', 'starttls-not-supported')).toBeGreaterThanOrEqual(2);
    expect(count('sts', 'certificate-host-mismatch')).toBeGreaterThanOrEqual(1);
    expect(count('no-policy-found', 'success')).toBeGreaterThanOrEqual(1);
  });
});
