import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnssecResolver, probeDane } from '../src/delivery/index.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { makeCertificate } from './peers/certificates.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { startPolicyServer, type PolicyServer } from './peers/policy-server.ts';
import { settle, startDeliveryEnv, verifyDkim, type DeliveryEnv } from './delivery-helpers.ts';

// DANE (RFC 7672) in delivery, end to end. The loopback DNS server plays the validating
// resolver the operator names (--dane-resolver): it sets the AD bit on the names a test marks
// signed. Two test MX hosts share one port: 127.0.0.1 offers STARTTLS with a certificate a
// test CA signed (a DANE session checks it against TLSA records, not CAs), 127.0.0.2 offers no
// STARTTLS (a man in the middle who strips it).

let dns: DnsServer;
let tlsMx: MxPeer;
let plainMx: MxPeer;
let policy: PolicyServer;
let d: DeliveryEnv;
let leafSpki: Buffer;
let caCert: Buffer;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();
const EE = () => ({ usage: 3, selector: 1, matchingType: 1, data: sha256(leafSpki) });
const TA = () => ({ usage: 2, selector: 0, matchingType: 1, data: sha256(caCert) });
const WRONG = { usage: 3, selector: 1, matchingType: 1, data: Buffer.alloc(32, 7) };

/** A destination whose MX host is `ip`; `signed`: its MX and address records carry AD. */
function destination(name: string, ip: string, signed: boolean, tlsa?: ReturnType<typeof EE>[]) {
  const mx = `mx.${name}`;
  dns.set(name, { MX: [{ exchange: mx, priority: 10 }], AD: signed });
  dns.set(mx, { A: [ip], AD: signed });
  if (tlsa) dns.set(`_${tlsMx.port}._tcp.${mx}`, { TLSA: tlsa, AD: signed });
}

beforeAll(async () => {
  dns = await startDnsServer();
  // The signed root: what the probe asks to learn that the resolver validates.
  dns.set('', { AD: true });
  const names = ['ee.test', 'eebad.test', 'ta.test', 'plain.test', 'both.test', 'insecure.test', 'bogus.test'];
  const cert = await makeCertificate({
    names: [...names.map((n) => `mx.${n}`), 'mta-sts.both.test'],
    // The delivery runs on the test clock (2026-03-15): DANE-TA checks the leaf's dates at it.
    notBefore: new Date('2026-01-01T00:00:00Z'),
    notAfter: new Date('2027-12-31T00:00:00Z'),
  });
  leafSpki = new X509Certificate(cert.cert).publicKey.export({ type: 'spki', format: 'der' });
  caCert = new X509Certificate(cert.ca).raw;
  tlsMx = await startMxPeer({ tls: { key: cert.key, cert: cert.cert } });
  plainMx = await startMxPeer({ listen: { host: '127.0.0.2', port: tlsMx.port } });
  policy = await startPolicyServer(cert);
  // The MTA-STS policy host is trusted (its CA in --outbound-ca); the MX hosts are reached by DANE.
  const dir = mkdtempSync(join(tmpdir(), 'svc-dane-'));
  writeFileSync(join(dir, 'ca.pem'), cert.ca);
  d = await startDeliveryEnv(
    dns,
    { mxPort: String(tlsMx.port), daneResolver: dns.server, outboundCa: join(dir, 'ca.pem') },
    undefined,
    { mtaStsPort: policy.port },
  );
});

afterAll(async () => {
  await d.env.close();
  await Promise.all([tlsMx.close(), plainMx.close(), dns.close()]);
  await policy.close();
});

async function deliver(to: string) {
  const id = await d.send([to]);
  await settle(d.env);
  const [r] = await d.recipients(id);
  const received = [...tlsMx.received, ...plainMx.received].filter((m) => m.to.includes(to));
  const connected = (await d.events(id)).find((e) => e.type === 'smtp_connected');
  return { r: r!, received, connected };
}

describe('DANE with a validating resolver', () => {
  it('delivers to a host whose certificate matches its DANE-EE record', async () => {
    destination('ee.test', '127.0.0.1', true, [EE()]);
    const { r, received, connected } = await deliver('ann@ee.test');
    expect(r.status).toBe('DELIVERED');
    expect(received).toHaveLength(1);
    expect(received[0]!.secure).toBe(true);
    expect(connected).toMatchObject({ mx_host: 'mx.ee.test', tls: true, tls_policy: 'dane' });
    expect((await verifyDkim(received[0]!.raw, dns)).status).toBe('pass');
  });

  it('delivers through a DANE-TA record: the chain to the anchor verifies and the name is the MX host', async () => {
    destination('ta.test', '127.0.0.1', true, [TA()]);
    const { r, connected } = await deliver('bob@ta.test');
    expect(r.status).toBe('DELIVERED');
    expect(connected).toMatchObject({ tls_policy: 'dane' });
  });

  it('defers (never bounces) when the certificate matches no TLSA record, and sends nothing', async () => {
    destination('eebad.test', '127.0.0.1', true, [WRONG]);
    const { r, received } = await deliver('cat@eebad.test');
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/DANE: mx\.eebad\.test must match its TLSA records/);
    expect(received).toHaveLength(0);
  });

  it('defers rather than send in clear to a DANE host that offers no STARTTLS', async () => {
    destination('plain.test', '127.0.0.2', true, [EE()]);
    const { r, received } = await deliver('dan@plain.test');
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/DANE: mx\.plain\.test must match its TLSA records/);
    expect(received).toHaveLength(0);
    expect(plainMx.received).toHaveLength(0);
  });

  it('takes precedence over MTA-STS: an enforce policy naming another host does not stop it', async () => {
    destination('both.test', '127.0.0.1', true, [EE()]);
    dns.set('_mta-sts.both.test', { TXT: ['v=STSv1; id=1'] });
    dns.set('mta-sts.both.test', { A: ['127.0.0.1'] });
    policy.policies.set(
      'mta-sts.both.test',
      'version: STSv1\r\nmode: enforce\r\nmx: mx.elsewhere.test\r\nmax_age: 86400\r\n',
    );
    const { r, connected } = await deliver('eve@both.test');
    expect(r.status).toBe('DELIVERED');
    expect(connected).toMatchObject({ tls_policy: 'dane' });
  });

  it('does not apply to a destination whose MX records are not signed (no AD): TLSA there is ignored', async () => {
    destination('insecure.test', '127.0.0.1', false, [WRONG]);
    const { r, connected } = await deliver('fay@insecure.test');
    expect(r.status).toBe('DELIVERED');
    expect(connected?.tls_policy).toBeUndefined();
  });

  it('defers when the TLSA lookup fails validation (SERVFAIL from the validating resolver)', async () => {
    destination('bogus.test', '127.0.0.1', true);
    dns.set(`_${tlsMx.port}._tcp.mx.bogus.test`, { rcode: 'SERVFAIL' });
    const { r, received } = await deliver('gus@bogus.test');
    expect(r.status).toBe('QUEUED');
    expect(r.last_error).toMatch(/DANE: no MX host of bogus\.test can be used/);
    expect(received).toHaveLength(0);
  });
});

describe('saying whether DANE is on, once at start', () => {
  const lines = () => {
    const said: string[] = [];
    return {
      said,
      log: { info: (_: object, m: string) => said.push(m), warn: (_: object, m: string) => said.push(m) },
    };
  };

  it('is off without a named resolver, and says so', async () => {
    const { said, log } = lines();
    expect(await probeDane(undefined, false, null, log)).toBe(false);
    expect(said).toEqual(['DANE is off: no validating resolver named (--dane-resolver); MTA-STS still applies']);
  });

  it('is off when the named resolver does not validate (no AD on the signed root), and says so', async () => {
    const { said, log } = lines();
    dns.set('', {});
    const resolver = createDnssecResolver(dns.server, new FakeClock('2026-03-15T12:00:00Z'));
    expect(await probeDane(dns.server, false, resolver, log)).toBe(false);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(new RegExp(`^DANE is off: ${dns.server} gave no validated answer \\(.*AD`));
    dns.set('', { AD: true });
    expect(await probeDane(dns.server, false, createDnssecResolver(dns.server, new FakeClock()), log)).toBe(true);
  });
});

describe('an MX host the validated answer does not name', () => {
  it('is not tried, even with TLSA records that match: a spoofed ordinary resolver cannot pick the host', async () => {
    // The ordinary resolver (what delivery asks for MX) is spoofed to name mx.evil.test; the
    // validating resolver's signed answer names mx.spoof.test. TLSA for mx.evil.test matches.
    const spoofed = await startDnsServer();
    spoofed.set('spoof.test', { MX: [{ exchange: 'mx.evil.test', priority: 10 }] });
    spoofed.set('mx.evil.test', { A: ['127.0.0.1'] });
    dns.set('spoof.test', { MX: [{ exchange: 'mx.spoof.test', priority: 10 }], AD: true });
    dns.set('mx.spoof.test', { A: ['127.0.0.1'], AD: true });
    dns.set('mx.evil.test', { A: ['127.0.0.1'], AD: true });
    dns.set(`_${tlsMx.port}._tcp.mx.evil.test`, { TLSA: [EE()], AD: true });
    const e = await startDeliveryEnv(dns, {
      mxPort: String(tlsMx.port),
      daneResolver: dns.server,
      dnsServers: spoofed.server,
    });
    try {
      const id = await e.send(['ivy@spoof.test']);
      await settle(e.env);
      const [r] = await e.recipients(id);
      expect(r!.status).toBe('QUEUED');
      expect(r!.last_error).toMatch(
        /DANE: no MX host of spoof\.test can be used \(mx\.evil\.test is not in the DNSSEC-signed MX records\)/,
      );
      expect(tlsMx.received.filter((m) => m.to.includes('ivy@spoof.test'))).toHaveLength(0);
    } finally {
      await e.env.close();
      await spoofed.close();
    }
  });
});
