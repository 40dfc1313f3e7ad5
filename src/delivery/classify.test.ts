import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TEXT_RULES } from './classify-rules.ts';
import {
  BOUNCE_CATEGORIES,
  classifyFailure,
  classifyReply,
  type BounceCategory,
  type Classification,
  type FailureKind,
  type SmtpReply,
} from './classify.ts';
import { DEAD, DELIVERED, RETRY, ROWS, type Expected, type Row } from './classify-cases.ts';

const CODE_LINE = /^\d{3}(?:[ -]|$)/;
const ENHANCED_LINE = /^[245]\.\d{1,3}\.\d{1,3}(?:\s+|$)/;

/** The reply as a careful SMTP client hands it over: code, enhanced code and bare text apart. */
function asParsed(raw: string): SmtpReply {
  const enhanced = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})(?:\s|$)/.exec(raw)?.[1] ?? null;
  const text = raw
    .split('\n')
    .map((line) => line.replace(CODE_LINE, '').replace(ENHANCED_LINE, ''))
    .join('\n');
  return { code: Number(raw.slice(0, 3)), enhanced, text };
}

/** The reply as nodemailer's `response` gives it: every line still prefixed, no enhanced code apart. */
function asRaw(raw: string): SmtpReply {
  return { code: Number(raw.slice(0, 3)), enhanced: null, text: raw };
}

function expectedOf([, , expected, category]: Row): Omit<Classification, 'reason' | 'rule'> {
  return { ...expected, category };
}

function withoutReason({
  reason: _reason,
  rule: _rule,
  ...rest
}: Classification): Omit<Classification, 'reason' | 'rule'> {
  return rest;
}

describe('classifyReply', () => {
  it('has a table of at least 60 real-world replies', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(60);
  });

  it.each(ROWS)('%s: %s', (...row) => {
    const result = classifyReply(asParsed(row[1]));
    expect(withoutReason(result)).toEqual(expectedOf(row));
    expect(result.reason).toMatch(/^the |^we /);
  });

  it.each(ROWS)('%s, raw with codes in the text: %s', (...row) => {
    expect(withoutReason(classifyReply(asRaw(row[1])))).toEqual(expectedOf(row));
  });

  it('produces every one of the 12 categories from some row', () => {
    const produced = new Set(ROWS.map(([, reply]) => classifyReply(asParsed(reply)).category));
    expect(BOUNCE_CATEGORIES).toHaveLength(12);
    for (const category of BOUNCE_CATEGORIES) expect(produced, category).toContain(category);
  });

  it('never suppresses on a reputation, policy, authentication or content row', () => {
    const refusals = ['reputation-blocklist', 'policy-rejection', 'auth-failure', 'content-spam-block'];
    const rows = ROWS.filter(([, , , category]) => category !== null && refusals.includes(category));
    expect(rows.length).toBeGreaterThan(30);
    for (const [, reply] of rows) {
      const result = classifyReply(asParsed(reply));
      expect(result.suppress, reply).toBe(false);
      expect(result.outcome, reply).not.toBe('hard');
    }
  });

  it.each([
    '550 5.1.1 <x@example.org>: Recipient address rejected: Client host [1.2.3.4] blocked using zen.spamhaus.org',
    '550 5.1.1 User unknown; Client host [1.2.3.4] blocked using Barracuda Reputation',
    "550 5.1.10 Messages from [1.2.3.4] weren't sent: part of their network is on our block list (S3150)",
    '550 5.1.1 Access denied, banned sending IP [1.2.3.4]',
    '554 5.1.2 [TSS09] All messages from 1.2.3.4 will be permanently deferred',
    '550 5.2.1 Reject for policy reason RULE3_2',
    '550 5.1.1 Your IP address 1.2.3.4 is listed on dnsbl.example.net',
    '550 5.1.1 Mailbox unavailable: mail from this IP is refused',
    '550 5.1.8 Sender address rejected: Domain not found',
    '550 5.1.1 Sender address rejected: User unknown in local recipient table',
    '550-Verification failed for <bounce@our.example>\n550 Unrouteable address',
  ])('never suppresses a block aimed at our sending IP or sender, whatever the code: %s', (raw) => {
    for (const reply of [asParsed(raw), asRaw(raw)]) {
      const result = classifyReply(reply);
      expect(result.suppress).toBe(false);
      expect(result.outcome).toBe('soft');
      // Our sender's domain not resolving is a DNS failure on our side (decisions.md), never the recipient's.
      expect(['reputation-blocklist', 'policy-rejection', 'dns-mx-failure']).toContain(result.category);
    }
  });

  it('keeps outcome, bounce type, category and suppression consistent on every row', () => {
    for (const [, reply] of ROWS) {
      const result = classifyReply(asParsed(reply));
      expect(result.suppress, reply).toBe(result.outcome === 'hard');
      expect(result.bounce_type, reply).toBe(
        result.outcome === 'hard' || result.outcome === 'soft' ? result.outcome : null,
      );
      expect(result.category === null, reply).toBe(result.outcome === 'delivered');
      if (result.outcome === 'hard') expect(['invalid-recipient', 'dns-mx-failure'], reply).toContain(result.category);
    }
  });

  it('reads the text before the enhanced code, and the enhanced code before the basic code', () => {
    const textWins = classifyReply({ code: 550, enhanced: '5.7.1', text: 'mailbox unavailable: user does not exist' });
    expect(textWins).toMatchObject({ outcome: 'hard', category: 'invalid-recipient' });
    const enhancedWins = classifyReply({ code: 552, enhanced: '5.3.4', text: 'Rejected' });
    expect(enhancedWins).toMatchObject({ outcome: 'soft', category: 'message-too-large' });
    const codeLast = classifyReply({ code: 421, text: 'Rejected' });
    expect(codeLast).toMatchObject({ outcome: 'retry', category: 'connection-error' });
    // 552 alone is storage (RFC 5321) or size (RFC 1870): it gives no reason.
    expect(classifyReply({ code: 552, text: 'Rejected' })).toMatchObject({ outcome: 'soft', category: 'unknown' });
  });

  it('prefers the given enhanced code to one in the text, and ignores a malformed one', () => {
    expect(classifyReply({ code: 550, enhanced: '5.3.4', text: '5.1.1 Rejected' }).category).toBe('message-too-large');
    // A code that only names its class gives no reason to a text that has none.
    expect(classifyReply({ code: 550, enhanced: '5.7.1', text: 'Message rejected.' }).category).toBe('unknown');
    expect(classifyReply({ code: 550, enhanced: ' 5.1.1 ', text: 'Rejected' }).outcome).toBe('hard');
    expect(classifyReply({ code: 550, enhanced: 'bogus', text: '5.1.1 Rejected' }).outcome).toBe('hard');
    expect(classifyReply({ code: 550, enhanced: '', text: 'Rejected' })).toMatchObject({
      outcome: 'soft',
      category: 'unknown',
    });
  });

  it('finds an enhanced code inside the text, but not inside an IP address or a version', () => {
    expect(classifyReply({ code: 550, text: 'Requested action not taken (#5.1.1)' }).outcome).toBe('hard');
    expect(classifyReply({ code: 550, text: 'Connection from 5.1.1.2 rejected' })).toMatchObject({
      outcome: 'soft',
      category: 'unknown',
    });
    expect(classifyReply({ code: 550, text: 'Rejected by filter v5.1.1' }).category).toBe('unknown');
  });

  it('reads multi-line replies with CRLF and wrapped phrases', () => {
    const text = '550-5.1.1 The email account that you tried to\r\n550-5.1.1 reach does not exist.\r\n550 5.1.1 gsmtp';
    expect(classifyReply({ code: 550, text })).toMatchObject({ outcome: 'hard', category: 'invalid-recipient' });
  });

  it('copes with missing, empty or odd text and codes', () => {
    const noText = { code: 550 } as unknown as SmtpReply;
    expect(classifyReply(noText)).toMatchObject({ outcome: 'soft', category: 'unknown' });
    expect(classifyReply({ code: 550, text: '   \n  ' })).toMatchObject({ outcome: 'soft', category: 'unknown' });
    expect(classifyReply({ code: 451, text: '' })).toMatchObject({ outcome: 'retry', category: 'unknown' });
    expect(classifyReply({ code: 250, enhanced: '5.1.1', text: 'user unknown' })).toMatchObject(DELIVERED);
    const codeAsString = { code: '550', text: 'User unknown' } as unknown as SmtpReply;
    expect(classifyReply(codeAsString).outcome).toBe('hard');
    expect(classifyReply({ code: Number.NaN, text: '550 5.1.1 User unknown' }).outcome).toBe('hard');
    expect(classifyReply({ code: 0, text: '' })).toMatchObject({ outcome: 'retry', category: 'connection-error' });
    expect(classifyReply({ code: 354, text: 'End data with <CR><LF>.<CR><LF>' })).toMatchObject(RETRY);
  });

  it('is pure: it does not change its input and always answers the same', () => {
    const reply = Object.freeze({ code: 550, enhanced: '5.1.1', text: 'User unknown' });
    const first = classifyReply(reply);
    expect(classifyReply(reply)).toEqual(first);
    // A rule with the g or y flag would carry lastIndex from one reply to the next.
    for (const rule of TEXT_RULES) expect(rule.match.flags, rule.match.source).not.toMatch(/[gy]/);
  });
});

describe('classifyFailure', () => {
  it.each<[FailureKind, Expected, BounceCategory]>([
    ['dns-nxdomain', DEAD, 'dns-mx-failure'],
    ['dns-null-mx', DEAD, 'invalid-recipient'],
    ['dns-no-address', RETRY, 'dns-mx-failure'],
    ['dns-temporary', RETRY, 'dns-mx-failure'],
    ['connect', RETRY, 'connection-error'],
    ['timeout', RETRY, 'connection-error'],
    ['tls', RETRY, 'connection-error'],
    ['protocol', RETRY, 'connection-error'],
    ['disconnected', RETRY, 'connection-error'],
  ])('%s', (kind, expected, category) => {
    const result = classifyFailure({ kind, message: `queryMx ENOTFOUND example.invalid (${kind})` });
    expect(withoutReason(result)).toEqual({ ...expected, category });
    expect(result.reason).toMatch(/^the |^we /);
  });
});

describe('BOUNCE_CATEGORIES', () => {
  it('is the BounceCategory enumeration of the specification, in order', () => {
    const spec = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const row = /^\| BounceCategory \| (.+) \|$/m.exec(spec)?.[1];
    expect(row?.split(', ')).toEqual([...BOUNCE_CATEGORIES]);
  });
});
