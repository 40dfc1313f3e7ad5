import { describe, expect, it } from 'vitest';
import type { Lookup } from '../domains/index.ts';
import { checkFcrdns } from './fcrdns.ts';

/** Answers from a table; a name not in it is NXDOMAIN. */
function zone(ptr: Record<string, string[]>, forward: Record<string, string[]>) {
  const answer = (table: Record<string, string[]>, key: string): Promise<Lookup> =>
    Promise.resolve(
      table[key] ? { ok: true, values: table[key] } : { ok: false, temporary: false, reason: `${key} NXDOMAIN` },
    );
  return { ptr: (a: string) => answer(ptr, a), addresses: (n: string) => answer(forward, n) };
}

describe('forward-confirmed reverse DNS', () => {
  it('is ok when the PTR names the HELO host and its AAAA gives the address back in any spelling', async () => {
    const dns = zone({ '2001:db8::25': ['mta.example.com'] }, { 'mta.example.com': ['2001:DB8:0::25'] });
    expect(await checkFcrdns(dns, '2001:db8::25', 'mta.example.com')).toMatchObject({ status: 'ok' });
  });

  it('fails when the confirmed name is not the HELO name, naming both fixes', async () => {
    const dns = zone({ '203.0.113.5': ['vps-5.provider.net'] }, { 'vps-5.provider.net': ['203.0.113.5'] });
    expect(await checkFcrdns(dns, '203.0.113.5', 'mta.example.com')).toEqual({
      check: 'fcrdns',
      subject: '203.0.113.5',
      status: 'fail',
      detail: '203.0.113.5 is confirmed as vps-5.provider.net, but svc says HELO mta.example.com',
      fix:
        'set --hostname vps-5.provider.net (SVC_HOSTNAME), or ask the provider of 203.0.113.5 to set its ' +
        'reverse DNS (PTR) to mta.example.com',
    });
  });

  it('fails without a PTR record and warns on a private address without asking', async () => {
    const dns = zone({}, {});
    expect(await checkFcrdns(dns, '203.0.113.5', 'mta.example.com')).toMatchObject({
      status: 'fail',
      detail: '203.0.113.5 has no PTR record',
    });
    expect(await checkFcrdns(dns, '10.0.0.5', 'mta.example.com')).toMatchObject({ status: 'warn' });
  });
});
