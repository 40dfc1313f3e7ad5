import { createHash, randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDnssecResolver, parseServer, type DnssecResolver } from '../src/delivery/dnssec-resolver.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

// The DANE stub client against a real DNS server on loopback that plays a validating resolver:
// the AD bit per name, SERVFAIL for bogus, silence for a timeout (RFC 7672 2.1, 2.2).

const MX = 'mx.example.test';
const TLSA_NAME = `_25._tcp.${MX}`;
const digest = (s: string) => createHash('sha256').update(s).digest();
const EE = { usage: 3, selector: 1, matchingType: 1, data: digest('the MX key') };
const TA = { usage: 2, selector: 0, matchingType: 1, data: digest('the CA') };
/** A timeout a test can wait for: a lost answer costs this, not the 5 s default. */
const TIMEOUT_MS = 150;

let dns: DnsServer;
let clock: FakeClock;
let resolver: DnssecResolver;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns.close());

/** A resolver with an empty cache, for a name whose answer the test changes. */
const fresh = () => createDnssecResolver(dns.server, clock, { timeoutMs: TIMEOUT_MS });

beforeEach(() => {
  for (const name of ['', 'example.test', MX, TLSA_NAME, 'mx.hoster.test', '_25._tcp.mx.hoster.test']) dns.remove(name);
  dns.queries.length = 0;
  clock = new FakeClock();
  resolver = fresh();
});

describe('probe: does the named resolver validate?', () => {
  it('says yes when the signed root comes back with AD', async () => {
    dns.set('', { AD: true });
    expect(await resolver.probe()).toMatchObject({ validating: true });
    expect(dns.queries).toEqual(['SOA ']);
  });

  it('says no, and why, when AD is missing', async () => {
    dns.set('', {});
    const probe = await resolver.probe();
    expect(probe).toEqual({ validating: false, reason: expect.stringContaining('does not set the AD bit') });
    expect(probe.reason).toContain(dns.server);
  });

  it('says no when the resolver does not answer', async () => {
    dns.set('', { silent: true });
    expect(await resolver.probe()).toEqual({ validating: false, reason: expect.stringContaining('no answer') });
  });
});

describe('tlsa', () => {
  it('returns the records of a signed answer (secure)', async () => {
    dns.set(MX, { A: ['192.0.2.25'], AD: true });
    dns.set(TLSA_NAME, { TLSA: [EE, TA], AD: true });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'secure', records: [EE, TA], base: MX });
    expect(dns.queries).toContain(`TLSA ${TLSA_NAME}`);
  });

  it('ignores records that came without AD (insecure)', async () => {
    dns.set(TLSA_NAME, { TLSA: [EE] });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'insecure' });
  });

  it('sees an authenticated denial, NODATA or NXDOMAIN (secure-none)', async () => {
    dns.set(TLSA_NAME, { TXT: ['not a TLSA'], AD: true });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'secure-none' });
    dns.set(TLSA_NAME, { rcode: 'NXDOMAIN', AD: true });
    expect(await fresh().tlsa(MX, 25)).toEqual({ state: 'secure-none' });
  });

  it('calls a SERVFAIL bogus (RFC 7672 2.1.1: the delivery waits)', async () => {
    dns.set(TLSA_NAME, { rcode: 'SERVFAIL' });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'bogus', reason: expect.stringContaining('SERVFAIL') });
  });

  it('gives up after its timeout when the resolver is silent', async () => {
    dns.set(TLSA_NAME, { silent: true });
    const started = performance.now();
    const answer = await resolver.tlsa(MX, 25);
    expect(answer).toEqual({ state: 'error', reason: expect.stringContaining(`no answer from ${dns.server}`) });
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 10);
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    // Three full certificates (matching type 0) do not fit the 1232 octets asked for over UDP.
    const big = [1, 2, 3].map(() => ({ usage: 3, selector: 0, matchingType: 0, data: randomBytes(900) }));
    dns.set(TLSA_NAME, { TLSA: big, AD: true });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'secure', records: big, base: MX });
    // One question, asked twice: over UDP, then over TCP.
    expect(dns.queries.filter((q) => q === `TLSA ${TLSA_NAME}`)).toHaveLength(2);
  });

  it('follows a secure CNAME: the expanded name first, then the host name (RFC 7672 2.2.2)', async () => {
    dns.set(MX, { CNAME: 'mx.hoster.test', AD: true });
    dns.set('mx.hoster.test', { A: ['192.0.2.26'], AD: true });
    dns.set('_25._tcp.mx.hoster.test', { TLSA: [TA], AD: true });
    dns.set(TLSA_NAME, { TLSA: [EE], AD: true });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'secure', records: [TA], base: 'mx.hoster.test' });

    dns.set('_25._tcp.mx.hoster.test', { AD: true });
    expect(await fresh().tlsa(MX, 25)).toEqual({ state: 'secure', records: [EE], base: MX });
  });

  it('does not follow an insecure CNAME: only the host name counts', async () => {
    dns.set(MX, { CNAME: 'mx.hoster.test', AD: true });
    dns.set('mx.hoster.test', { A: ['192.0.2.26'] });
    dns.set('_25._tcp.mx.hoster.test', { TLSA: [TA], AD: true });
    dns.set(TLSA_NAME, { TLSA: [EE], AD: true });
    expect(await resolver.tlsa(MX, 25)).toEqual({ state: 'secure', records: [EE], base: MX });
    expect(dns.queries).not.toContain('TLSA _25._tcp.mx.hoster.test');
  });

  it('keeps an answer for its TTL (60 s at the test server), by the injected clock', async () => {
    dns.set(TLSA_NAME, { TLSA: [EE], AD: true });
    await resolver.tlsa(MX, 25);
    dns.set(TLSA_NAME, { TLSA: [TA], AD: true });
    expect(await resolver.tlsa(MX, 25)).toMatchObject({ records: [EE] });
    clock.advance(59_000);
    expect(await resolver.tlsa(MX, 25)).toMatchObject({ records: [EE] });
    clock.advance(2_000);
    expect(await resolver.tlsa(MX, 25)).toMatchObject({ records: [TA] });
    expect(dns.queries.filter((q) => q === `TLSA ${TLSA_NAME}`)).toHaveLength(2);
  });

  it('does not keep a failure', async () => {
    dns.set(TLSA_NAME, { rcode: 'SERVFAIL' });
    expect(await resolver.tlsa(MX, 25)).toMatchObject({ state: 'bogus' });
    dns.set(TLSA_NAME, { TLSA: [EE], AD: true });
    expect(await resolver.tlsa(MX, 25)).toMatchObject({ state: 'secure' });
  });
});

describe('mxSecurity (RFC 7672 2.2.1)', () => {
  it('is secure for a signed MX RRset, insecure without AD, bogus on SERVFAIL, error when silent', async () => {
    dns.set('example.test', { MX: [{ exchange: MX, priority: 10 }], AD: true });
    expect(await resolver.mxSecurity('example.test')).toBe('secure');
    dns.set('example.test', { MX: [{ exchange: MX, priority: 10 }] });
    expect(await fresh().mxSecurity('example.test')).toBe('insecure');
    dns.set('example.test', { rcode: 'SERVFAIL' });
    expect(await fresh().mxSecurity('example.test')).toBe('bogus');
    dns.set('example.test', { silent: true });
    expect(await fresh().mxSecurity('example.test')).toBe('error');
  });

  it("is that of the domain's own address records when it has no MX", async () => {
    dns.set('example.test', { A: ['192.0.2.25'], AD: true });
    expect(await resolver.mxSecurity('example.test')).toBe('secure');
    expect(dns.queries).toEqual(['MX example.test', 'A example.test']);
  });
});

describe('the query itself', () => {
  let peer: dgram.Socket;
  let asked: DecodedPacket[];

  beforeAll(async () => {
    asked = [];
    peer = dgram.createSocket('udp4');
    peer.on('message', (msg, from) => {
      const query = dnsPacket.decode(msg);
      asked.push(query);
      const answer = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.AUTHENTIC_DATA,
        questions: query.questions,
      });
      peer.send(answer, from.port, from.address);
    });
    await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => peer.close(() => resolve())));

  it('sets RD and AD, and EDNS0 with DO (RFC 6840 5.7)', async () => {
    const server = `127.0.0.1:${peer.address().port}`;
    expect(await createDnssecResolver(server, clock).probe()).toMatchObject({ validating: true });
    const [query] = asked;
    expect(query).toMatchObject({ flag_rd: true, flag_ad: true, questions: [{ type: 'SOA', name: '.' }] });
    expect(query!.additionals).toEqual([expect.objectContaining({ type: 'OPT', flag_do: true, udpPayloadSize: 1232 })]);
  });
});

it('reads the resolver setting: host, host:port, [v6]:port, bare v6', () => {
  expect(parseServer('192.0.2.53')).toEqual({ host: '192.0.2.53', port: 53, family: 'udp4' });
  expect(parseServer('127.0.0.1:5353')).toEqual({ host: '127.0.0.1', port: 5353, family: 'udp4' });
  expect(parseServer('[::1]:5353')).toEqual({ host: '::1', port: 5353, family: 'udp6' });
  expect(parseServer('2001:db8::53')).toEqual({ host: '2001:db8::53', port: 53, family: 'udp6' });
});
