import type { LookupAddress, LookupOptions } from 'node:dns';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../src/domains/index.ts';
import { AppError } from '../src/errors.ts';
import {
  addressProblem,
  checkWebhookUrl,
  createGuardedLookup,
  createWebhookAgent,
  resolverFromDns,
  UnsafeAddressError,
  type ResolveAddresses,
} from '../src/webhooks/url-guard.ts';
import { makeCertificate } from './peers/certificates.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

const strict = { allowInsecure: false };
const insecure = { allowInsecure: true };
const PUBLIC_V4 = '93.184.215.14';

/** Hostile URLs and the reason each is refused for at create/update. */
const HOSTILE_URLS: [string, string][] = [
  ['http://hook.example.com/', 'not_https'],
  ['ftp://hook.example.com/', 'not_https'],
  ['file:///etc/passwd', 'not_https'],
  ['javascript:alert(1)', 'not_https'],
  ['gopher://hook.example.com:25/', 'not_https'],
  ['https://user:pass@hook.example.com/', 'credentials_in_url'],
  ['https://user@hook.example.com/', 'credentials_in_url'],
  ['https://:pass@hook.example.com/', 'credentials_in_url'],
  ['not a url', 'invalid_url'],
  ['/relative/path', 'invalid_url'],
  ['https://', 'invalid_url'],
  ['https://1.2.3.4.5/', 'invalid_url'],
  [`https://hook.example.com/${'a'.repeat(2048)}`, 'too_long'],
  ['https://2130706433/', 'loopback'], // decimal
  ['https://0177.0.0.1/', 'loopback'], // octal
  ['https://0x7f.0.0.1/', 'loopback'], // hex octet
  ['https://0x7f000001/', 'loopback'], // hex
  ['https://127.1/', 'loopback'], // short form
  ['https://127.0.0.1./', 'loopback'], // trailing dot
  ['https://%31%32%37.0.0.1/', 'loopback'], // percent-encoded
  ['https://[::1]/', 'loopback'],
  ['https://[::ffff:127.0.0.1]/', 'loopback'], // mapped
  ['https://[::ffff:7f00:1]/', 'loopback'],
  ['https://[0:0:0:0:0:ffff:127.0.0.1]/', 'loopback'],
  ['https://[::127.0.0.1]/', 'loopback'], // IPv4-compatible
  ['https://[::ffff:8.8.8.8]/', 'ipv4_mapped'], // mapped is refused even when public
  ['https://localhost/', 'loopback'],
  ['https://api.LOCALHOST./', 'loopback'],
  ['https://ⓛocalhost/', 'loopback'], // IDNA maps it to localhost
  ['https://0.0.0.0/', 'unspecified'],
  ['https://0/', 'unspecified'],
  ['https://[::]/', 'unspecified'],
  ['https://169.254.169.254/latest/meta-data/', 'cloud_metadata'],
  ['https://[fd00:ec2::254]/', 'cloud_metadata'],
  ['https://100.100.100.200/', 'cloud_metadata'],
  ['https://192.0.0.192/', 'cloud_metadata'],
  ['https://[::ffff:169.254.169.254]/', 'cloud_metadata'],
  ['https://100.64.0.1/', 'cgnat'],
  ['https://[fe80::1]/', 'link_local'],
  ['https://169.254.1.1/', 'link_local'],
  ['https://224.0.0.1/', 'multicast'],
  ['https://[ff02::1]/', 'multicast'],
  ['https://10.0.0.1/', 'private'],
  ['https://192.168.1.1/', 'private'],
  ['https://172.16.0.1/', 'private'],
  ['https://172.31.255.255/', 'private'],
  ['https://[fc00::1]/', 'private'],
  ['https://[fd12:3456::1]/', 'private'],
  ['https://[fec0::1]/', 'private'],
  ['https://[64:ff9b::a00:1]/', 'private'], // NAT64 of 10.0.0.1
  ['https://[64:ff9b:1::1]/', 'private'],
  ['https://[::ffff:0:a00:1]/', 'private'], // SIIT of 10.0.0.1
  ['https://[2002:7f00:1::]/', 'loopback'], // 6to4 of 127.0.0.1
  ['https://[2001:0:4136:e378::1]/', 'teredo'],
  ['https://255.255.255.255/', 'broadcast'],
  ['https://0xffffffff/', 'broadcast'],
  ['https://240.0.0.1/', 'reserved'],
  ['https://[100::1]/', 'reserved'],
  ['https://[5f00::1]/', 'reserved'],
  ['https://198.18.0.1/', 'benchmarking'],
  ['https://192.0.2.1/', 'documentation'],
  ['https://[2001:db8::1]/', 'documentation'],
];

function refusal(fn: () => unknown): { reason: unknown; error: AppError } {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { reason: e.details?.reason, error: e };
  }
  throw new Error('not refused');
}

describe('checkWebhookUrl', () => {
  it.each(HOSTILE_URLS)('refuses %s (%s)', (url, reason) => {
    expect(refusal(() => checkWebhookUrl(url, strict)).reason).toBe(reason);
  });

  it('answers 422 request_validation_failed in the contract shape', () => {
    const { error } = refusal(() => checkWebhookUrl('https://2130706433/', strict));
    expect([error.code, error.status]).toEqual(['request_validation_failed', 422]);
    expect(error.details).toEqual({
      field: 'url',
      reason: 'loopback',
      fields: [{ field: 'url', message: error.message, code: 'loopback' }],
    });
    expect(error.message).toMatch(/loopback/);
  });

  it.each([
    'https://hook.example.com/path?q=1',
    'https://8.8.8.8/',
    'https://[2606:4700:4700::1111]:8443/',
    'https://[64:ff9b::808:808]/',
    'https://[2002:808:808::1]/',
    'https://notlocalhost.example/',
  ])('accepts %s', (url) => {
    expect(checkWebhookUrl(url, strict).href).toBe(new URL(url).href);
  });

  it('returns the normalized URL that was checked', () => {
    expect(checkWebhookUrl('HTTPS://Hook.Example.COM:443/x', strict).href).toBe('https://hook.example.com/x');
  });

  it('with allowInsecure allows http and private targets, not other schemes or credentials', () => {
    expect(checkWebhookUrl('http://127.0.0.1:8080/', insecure).host).toBe('127.0.0.1:8080');
    expect(checkWebhookUrl('https://[::1]/', insecure).hostname).toBe('[::1]');
    expect(refusal(() => checkWebhookUrl('ftp://127.0.0.1/', insecure)).reason).toBe('not_https');
    expect(refusal(() => checkWebhookUrl('http://u:p@127.0.0.1/', insecure)).reason).toBe('credentials_in_url');
  });
});

describe('addressProblem (addresses as DNS answers them)', () => {
  it.each([
    ['127.0.0.53', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0:0:0:0:0:FFFF:7F00:0001', 'loopback'],
    ['0.1.2.3', 'unspecified'],
    ['10.255.255.255', 'private'],
    ['100.127.255.255', 'cgnat'],
    ['169.254.170.2', 'cloud_metadata'],
    ['fd20:ce::254', 'cloud_metadata'],
    ['198.19.255.255', 'benchmarking'],
    ['2001:2::1', 'benchmarking'],
    ['3fff::1', 'documentation'],
    ['fe80::1%eth0', 'scoped_address'],
    ['0177.0.0.1', 'not_an_ip'], // no octal below the URL parser
    ['localhost', 'not_an_ip'],
    ['', 'not_an_ip'],
  ])('%s: %s', (ip, reason) => expect(addressProblem(ip)).toBe(reason));

  it.each(['8.8.8.8', '1.1.1.1', PUBLIC_V4, '100.128.0.0', '172.32.0.1', '172.15.255.255', '2606:4700:4700::1111'])(
    '%s is public',
    (ip) => expect(addressProblem(ip)).toBeUndefined(),
  );
});

type Answer = { err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number | undefined };

function lookupVia(lookup: ReturnType<typeof createGuardedLookup>, host: string, options: LookupOptions = {}) {
  return new Promise<Answer>((done) => lookup(host, options, (err, address, family) => done({ err, address, family })));
}

/** A fake resolver: a list of answers per name, used in turn (the last one repeats). */
function fakeResolver(zone: Record<string, string[][]>): ResolveAddresses & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (host: string) => {
    const turns = zone[host];
    if (!turns) return Promise.reject(Object.assign(new Error(`NXDOMAIN ${host}`), { code: 'ENOTFOUND' }));
    const n = calls.filter((c) => c === host).length;
    calls.push(host);
    return Promise.resolve(turns[Math.min(n, turns.length - 1)]!);
  };
  return Object.assign(resolve, { calls });
}

describe('createGuardedLookup with a fake resolver', () => {
  const fake = fakeResolver({
    localhost: [['127.0.0.1']],
    'mixed.test': [[PUBLIC_V4, '10.0.0.1']],
    'mixed6.test': [['2606:4700::1', '::1']],
    'mapped.test': [['::ffff:127.0.0.1']],
    'octal.test': [['0177.0.0.1']],
    'meta.test': [['169.254.169.254']],
    'empty.test': [[]],
    'public.test': [[PUBLIC_V4, '2606:4700::1']],
    'rebind.test': [[PUBLIC_V4], ['127.0.0.1']],
  });
  const lookup = createGuardedLookup(fake, strict);

  it.each([
    ['localhost', 'loopback', '127.0.0.1'],
    ['mixed.test', 'private', '10.0.0.1'],
    ['mixed6.test', 'loopback', '::1'],
    ['mapped.test', 'loopback', '::ffff:127.0.0.1'],
    ['octal.test', 'not_an_ip', '0177.0.0.1'],
    ['meta.test', 'cloud_metadata', '169.254.169.254'],
  ])('refuses %s (%s)', async (host, reason, address) => {
    for (const all of [true, false]) {
      const { err } = await lookupVia(lookup, host, { all });
      expect(err).toBeInstanceOf(UnsafeAddressError);
      expect(err).toMatchObject({ reason, host, address, code: 'ERR_UNSAFE_WEBHOOK_ADDRESS' });
    }
  });

  it('passes DNS failures on as they are, not as refusals', async () => {
    expect((await lookupVia(lookup, 'empty.test')).err).toMatchObject({ code: 'ENOTFOUND' });
    const { err } = await lookupVia(lookup, 'nxdomain.test');
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
    expect(err).not.toBeInstanceOf(UnsafeAddressError);
  });

  it('answers in the shape net asks for (all, family)', async () => {
    expect(await lookupVia(lookup, 'public.test', { all: true })).toEqual({
      err: null,
      address: [
        { address: PUBLIC_V4, family: 4 },
        { address: '2606:4700::1', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookupVia(lookup, 'public.test')).toEqual({ err: null, address: PUBLIC_V4, family: 4 });
    expect(await lookupVia(lookup, 'public.test', { family: 6 })).toEqual({
      err: null,
      address: '2606:4700::1',
      family: 6,
    });
  });

  it('resolves once per connection: a rebinding name gets the checked answer, then the refusal', async () => {
    const before = fake.calls.filter((c) => c === 'rebind.test').length;
    expect(await lookupVia(lookup, 'rebind.test')).toEqual({ err: null, address: PUBLIC_V4, family: 4 });
    expect((await lookupVia(lookup, 'rebind.test')).err).toMatchObject({ reason: 'loopback' });
    expect(fake.calls.filter((c) => c === 'rebind.test').length - before).toBe(2);
  });

  it('with allowInsecure still resolves but allows private answers', async () => {
    const open = createGuardedLookup(fake, insecure);
    expect(await lookupVia(open, 'localhost')).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });
});

interface Receiver {
  port: number;
  ca: string;
  connections: number;
  requests: { path: string; host: string | undefined; servername: unknown; local: string | undefined }[];
  server: Server;
}
let receiver: Receiver;

const NAMES = ['hook.test', 'rebind.hook.test'];

/** An HTTPS receiver on 127.0.0.1 for NAMES, its certificate signed by a test CA. */
async function startReceiver(): Promise<Receiver> {
  const tls = await makeCertificate({ names: NAMES });
  const r: Receiver = { port: 0, ca: tls.ca, connections: 0, requests: [], server: undefined as never };
  r.server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const socket = req.socket as typeof req.socket & { servername?: unknown };
    r.requests.push({
      path: req.url ?? '',
      host: req.headers.host,
      servername: socket.servername,
      local: socket.localAddress,
    });
    req.resume();
    if (req.url === '/redirect') res.writeHead(302, { location: `https://hook.test:${r.port}/target` }).end();
    else res.writeHead(204).end();
  });
  r.server.on('connection', () => r.connections++);
  await new Promise<void>((done) => r.server.listen(0, '127.0.0.1', done));
  r.port = (r.server.address() as AddressInfo).port;
  return r;
}

async function post(agent: Agent, url: string) {
  const res = await request(url, { dispatcher: agent, method: 'POST', body: '{}' });
  await res.body.dump();
  return res;
}

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => new Promise<void>((done) => receiver.server.close(() => done())));

describe('through a real loopback DNS server', () => {
  let dns: DnsServer;
  let resolve: ResolveAddresses;
  beforeAll(async () => {
    dns = await startDnsServer();
    dns.set('private.hook.test', { A: ['10.0.0.7'] });
    dns.set('loop6.hook.test', { AAAA: ['::1'] });
    dns.set('mixed.hook.test', { A: [PUBLIC_V4, '192.168.0.5'] });
    dns.set('split.hook.test', { A: [PUBLIC_V4], AAAA: ['fd00:ec2::254'] });
    dns.set('metadata.hook.test', { A: ['169.254.169.254'] });
    dns.set('rebind.hook.test', { A: [PUBLIC_V4] });
    dns.set('hook.test', { A: ['127.0.0.1'] });
    resolve = resolverFromDns(createDnsResolver([dns.server], { timeoutMs: 1000, tries: 1 }));
  });
  afterAll(() => dns.close());

  it.each([
    ['private.hook.test', 'private'],
    ['loop6.hook.test', 'loopback'],
    ['mixed.hook.test', 'private'],
    ['split.hook.test', 'cloud_metadata'],
    ['metadata.hook.test', 'cloud_metadata'],
  ])('refuses %s (%s)', async (host, reason) => {
    const { err } = await lookupVia(createGuardedLookup(resolve, strict), host, { all: true });
    expect(err).toMatchObject({ name: 'UnsafeAddressError', reason });
  });

  it('a rebinding name: one lookup per connection, the socket gets the checked address', async () => {
    const lookup = createGuardedLookup(resolve, strict);
    const queries = () => dns.queries.filter((q) => q === 'A rebind.hook.test').length;
    // The socket is destroyed on its 'lookup' event (net then never dials), and
    // the zone turns private at that moment: a second lookup would see it.
    const seen = await new Promise<string>((done, fail) => {
      const socket = tlsConnect({ host: 'rebind.hook.test', port: 443, lookup });
      socket.once('lookup', (err: Error | null, address: string) => {
        dns.set('rebind.hook.test', { A: ['127.0.0.1'] });
        socket.destroy();
        if (err) fail(err);
        else done(address);
      });
    });
    expect(seen).toBe(PUBLIC_V4);
    expect(queries()).toBe(1);
    const { err } = await lookupVia(lookup, 'rebind.hook.test', { all: true });
    expect(err).toMatchObject({ reason: 'loopback', address: '127.0.0.1' });
    expect(queries()).toBe(2);
  });

  it('the agent refuses a name that resolves to loopback, or reaches it with allowInsecure', async () => {
    const strictAgent = createWebhookAgent({ resolve, allowInsecure: false, ca: [receiver.ca] });
    const openAgent = createWebhookAgent({ resolve, allowInsecure: true, ca: [receiver.ca] });
    const before = receiver.connections;
    await expect(post(strictAgent, `https://hook.test:${receiver.port}/`)).rejects.toMatchObject({
      reason: 'loopback',
    });
    expect(receiver.connections).toBe(before);
    expect((await post(openAgent, `https://hook.test:${receiver.port}/`)).statusCode).toBe(204);
    await Promise.all([strictAgent.close(), openAgent.close()]);
  });
});

describe('createWebhookAgent against a real HTTPS receiver', () => {
  const resolve = fakeResolver({ 'hook.test': [['127.0.0.1']], 'rebind.hook.test': [['127.0.0.1'], ['127.0.0.2']] });
  let open: Agent;
  let guarded: Agent;
  beforeAll(() => {
    open = createWebhookAgent({ resolve, allowInsecure: true, timeoutMs: 5000, ca: [receiver.ca] });
    guarded = createWebhookAgent({ resolve, allowInsecure: false, timeoutMs: 5000, ca: [receiver.ca] });
  });
  afterAll(() => Promise.all([open.close(), guarded.close()]));

  it('with allowInsecure reaches 127.0.0.1 with the name as Host and SNI', async () => {
    const res = await post(open, `https://hook.test:${receiver.port}/events`);
    expect(res.statusCode).toBe(204);
    expect(receiver.requests.at(-1)).toEqual({
      path: '/events',
      host: `hook.test:${receiver.port}`,
      servername: 'hook.test',
      local: '127.0.0.1',
    });
  });

  it('connects to the address its one lookup answered (a second lookup would dial 127.0.0.2)', async () => {
    const res = await post(open, `https://rebind.hook.test:${receiver.port}/once`);
    expect(res.statusCode).toBe(204);
    expect(receiver.requests.at(-1)).toMatchObject({
      path: '/once',
      servername: 'rebind.hook.test',
      local: '127.0.0.1',
    });
    expect(resolve.calls.filter((h) => h === 'rebind.hook.test')).toHaveLength(1);
  });

  it('returns a 302 as it is, without following it', async () => {
    const count = receiver.requests.length;
    const res = await post(open, `https://hook.test:${receiver.port}/redirect`);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`https://hook.test:${receiver.port}/target`);
    expect(receiver.requests.slice(count).map((r) => r.path)).toEqual(['/redirect']);
  });

  it.each([
    ['a name that resolves to loopback', 'hook.test', 'loopback'],
    ['an IPv4 literal', '127.0.0.1', 'loopback'],
    ['an IPv6 literal', '[::1]', 'loopback'],
    ['a mapped literal', '[::ffff:127.0.0.1]', 'loopback'],
  ])('without allowInsecure refuses %s, and the receiver sees no connection', async (_, host, reason) => {
    const before = receiver.connections;
    const error: unknown = await post(guarded, `https://${host}:${receiver.port}/events`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeAddressError);
    expect(error).toMatchObject({ reason });
    expect(receiver.connections).toBe(before);
  });

  it('without allowInsecure refuses plain http at the connector too', async () => {
    await expect(post(guarded, `http://hook.test:${receiver.port}/`)).rejects.toMatchObject({ reason: 'not_https' });
  });

  it('refuses a timeout above the 10 s limit', () => {
    expect(() => createWebhookAgent({ resolve, allowInsecure: false, timeoutMs: 10_001 })).toThrow(RangeError);
  });
});
