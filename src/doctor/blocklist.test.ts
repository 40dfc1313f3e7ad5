import { describe, expect, it } from 'vitest';
import { BLOCKLISTS, blocklistCheck, blocklistQueryName, readAnswer } from './blocklist.ts';

const spamhaus = BLOCKLISTS.find((l) => l.zone === 'zen.spamhaus.org')!;

describe('blocklist queries and answers', () => {
  it('asks for the reversed octets of IPv4 and the reversed nibbles of IPv6 (RFC 5782)', () => {
    expect(blocklistQueryName('192.0.2.99', 'zen.spamhaus.org')).toBe('99.2.0.192.zen.spamhaus.org');
    expect(blocklistQueryName('2001:DB8::1:2', 'x.org')).toBe(
      '2.0.0.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.x.org',
    );
    expect(blocklistQueryName('mta.example.com', 'x.org')).toBeUndefined();
  });

  it.each([
    [['127.0.0.2'], 'SBL (a known spam source)'],
    [['127.0.0.3'], 'SBL CSS (snowshoe spam)'],
    [['127.0.0.4'], 'XBL (an infected or exploited host)'],
    [['127.0.0.11', '127.0.0.10'], 'PBL (an address that should not send mail directly: dynamic or end-user range)'],
    [['127.0.0.42'], 'listed (code 127.0.0.42)'],
  ])('reads Spamhaus answer %j as listed: %s', (answer, meaning) => {
    expect(readAnswer(spamhaus, answer)).toEqual({ kind: 'listed', meanings: [meaning] });
  });

  it('reads 127.255.255.x as a refused query (an open resolver), never as listed', () => {
    const v = readAnswer(spamhaus, ['127.255.255.254']);
    expect(v).toEqual({ kind: 'refused', answer: '127.255.255.254' });
    const c = blocklistCheck(spamhaus, '192.0.2.99', v);
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('refused the query');
    expect(c.fix).toContain('--dns-servers');
  });

  it('reads no answer as not listed and an answer outside 127/8 as odd', () => {
    expect(readAnswer(spamhaus, [])).toEqual({ kind: 'clear' });
    expect(readAnswer(spamhaus, ['198.51.100.1'])).toEqual({ kind: 'odd', answer: '198.51.100.1' });
  });
});
