import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver, type DnsLookups } from '../src/domains/index.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

// The resolver domain checks use, against a real DNS server on loopback.

let dns: DnsServer;
let resolver: DnsLookups;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = createDnsResolver([dns.server], { timeoutMs: 100, tries: 1 });
  dns.set('example.com', { TXT: ['v=spf1 -all', 'x'.repeat(600)], MX: [{ exchange: 'MX.Example.COM', priority: 5 }] });
  dns.set('v4.example', { A: ['192.0.2.1'] });
  dns.set('both.example', { A: ['192.0.2.1'], AAAA: ['2001:db8::1'] });
  dns.set('servfail.example', { rcode: 'SERVFAIL' });
  dns.set('refused.example', { rcode: 'REFUSED' });
  dns.set('silent.example', { silent: true });
});
afterAll(() => dns.close());

describe('DNS lookups for domain checks', () => {
  it('joins the character-strings of a long TXT record (answered over TCP)', async () => {
    expect(await resolver.txt('example.com')).toEqual({ ok: true, values: ['v=spf1 -all', 'x'.repeat(600)] });
  });

  it('gives MX hosts in lowercase and A with AAAA addresses', async () => {
    expect(await resolver.mx('example.com')).toEqual({ ok: true, values: ['mx.example.com'] });
    expect(await resolver.addresses('v4.example')).toEqual({ ok: true, values: ['192.0.2.1'] });
    expect(await resolver.addresses('both.example')).toEqual({ ok: true, values: ['192.0.2.1', '2001:db8::1'] });
  });

  it('answers NODATA as no records and NXDOMAIN as a definite failure', async () => {
    expect(await resolver.txt('v4.example')).toEqual({ ok: true, values: [] });
    expect(await resolver.txt('nowhere.example')).toEqual({
      ok: false,
      temporary: false,
      reason: 'TXT nowhere.example does not exist (NXDOMAIN)',
      code: 'ENOTFOUND',
    });
  });

  it.each([
    ['servfail.example', 'the DNS server failed (SERVFAIL) looking up TXT servfail.example', 'ESERVFAIL'],
    ['refused.example', 'the DNS server refused the query (REFUSED) for TXT refused.example', 'EREFUSED'],
    [
      'silent.example',
      'no answer from the DNS server within 100 ms looking up TXT silent.example (timeout)',
      'ETIMEOUT',
    ],
  ])('reports %s as a temporary failure', async (name, reason, code) => {
    expect(await resolver.txt(name)).toEqual({ ok: false, temporary: true, reason, code });
  });

  it('reads a CNAME without following it, and follows one for other types', async () => {
    dns.set('alias.example', { CNAME: 'v4.example' });
    expect(await resolver.cname('alias.example')).toEqual({ ok: true, values: ['v4.example'] });
    expect(await resolver.addresses('alias.example')).toEqual({ ok: true, values: ['192.0.2.1'] });
    expect(await resolver.cname('v4.example')).toEqual({ ok: true, values: [] });
  });

  it('reports an unreachable server as a temporary failure', async () => {
    const closed = await startDnsServer();
    await closed.close();
    const r = await createDnsResolver([closed.server], { timeoutMs: 100, tries: 1 }).txt('example.com');
    expect(r).toMatchObject({ ok: false, temporary: true });
  });
});
