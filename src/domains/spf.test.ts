import { describe, expect, it } from 'vitest';
import type { DnsLookups, Lookup } from '../lib/dns.ts';
import { spfAuthorises } from './spf.ts';

const HOST = 'mx.svc.test';
const found = (...values: string[]): Lookup => ({ ok: true, values });
const servfail: Lookup = { ok: false, temporary: true, reason: 'SERVFAIL' };

/** Answers from a table: the host has 192.0.2.7 and 2001:db8::7; example.com's MX is the host. */
function lookups(over: Partial<Record<string, Lookup>> = {}): DnsLookups {
  const table: Record<string, Lookup> = {
    [`addr ${HOST}`]: found('192.0.2.7', '2001:db8::7'),
    'addr example.com': found('192.0.2.7'),
    'addr other.example': found('198.51.100.1'),
    'mx example.com': found(HOST),
    'mx other.example': found('mx.other.example'),
    ...over,
  };
  const get = (k: string) => Promise.resolve(table[k] ?? found());
  return {
    txt: (n) => get(`txt ${n}`),
    mx: (n) => get(`mx ${n}`),
    addresses: (n) => get(`addr ${n}`),
    cname: (n) => get(`cname ${n}`),
    cancel: () => {},
  };
}

const check = (record: string, dns = lookups()) => spfAuthorises(record, 'example.com', HOST, dns);

describe('SPF authorisation of our host', () => {
  it.each([
    `v=spf1 a:${HOST} ~all`,
    `v=spf1 +a:${HOST}/24 -all`,
    `v=spf1 include:${HOST} -all`,
    'v=spf1 mx -all',
    'v=spf1 a -all',
    'v=spf1 ip4:192.0.2.7 -all',
    'v=spf1 ip4:192.0.2.0/24 -all',
    'v=spf1 ip6:2001:db8::/32 -all',
    `v=spf1 redirect=_spf.example.net include:spf.example.net a:${HOST}`,
  ])('accepts %s', async (record) => {
    expect(await check(record)).toEqual({ ok: true });
  });

  it.each([
    ['v=spf1 -all', 'does not authorise'],
    ['v=spf1 include:_spf.google.com ~all', 'does not authorise'],
    [`v=spf1 -all a:${HOST}`, 'does not authorise'],
    [`v=spf1 -a:${HOST} ~all`, 'gives mx.svc.test fail'],
    [`v=spf1 ~include:${HOST} ~all`, 'softfail'],
    ['v=spf1 ip4:198.51.100.0/24 ip6:2001:db9::/32 ip4:not-an-ip -all', 'does not authorise'],
    ['v=spf1 a:other.example mx:other.example -all', 'does not authorise'],
  ])('refuses %s', async (record, why) => {
    const v = await check(record);
    expect(v).toMatchObject({ ok: false, temporary: false });
    expect(v.ok || v.reason).toContain(why);
  });

  it('is temporary when a lookup it needed failed for now and nothing else matched', async () => {
    const v = await check('v=spf1 mx -all', lookups({ 'mx example.com': servfail }));
    expect(v).toEqual({ ok: false, temporary: true, reason: 'SERVFAIL' });
    expect(await check(`v=spf1 mx a:${HOST} -all`, lookups({ 'mx example.com': servfail }))).toEqual({ ok: true });
  });
});
