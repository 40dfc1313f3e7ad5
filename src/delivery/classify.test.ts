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

// The three outcomes of decisions.md ("Email lifecycle"), plus acceptance.
const DELIVERED = { outcome: 'delivered', bounce_type: null, suppress: false } as const;
const DEAD = { outcome: 'hard', bounce_type: 'hard', suppress: true } as const;
const REFUSED = { outcome: 'soft', bounce_type: 'soft', suppress: false } as const;
const RETRY = { outcome: 'retry', bounce_type: null, suppress: false } as const;
type Expected = typeof DELIVERED | typeof DEAD | typeof REFUSED | typeof RETRY;

type Row = [from: string, reply: string, expected: Expected, category: BounceCategory | null];

// Replies as servers send them, basic code and all; see asParsed and asRaw below.
const ROWS: Row[] = [
  ['generic', '250 2.0.0 OK', DELIVERED, null],
  ['generic', '250 Ok: queued as 12345', DELIVERED, null],
  ['Gmail', '250 2.0.0 OK  1700000000 d2si1234567qkb.123 - gsmtp', DELIVERED, null],
  ['Outlook', '250 2.6.0 <abc@EX.example.com> [InternalId=123] Queued mail for delivery', DELIVERED, null],
  ['Postfix', '250 2.1.5 Ok', DELIVERED, null],
  ['generic', '251 2.1.5 User not local; will forward', DELIVERED, null],

  [
    'Gmail',
    "550-5.1.1 The email account that you tried to reach does not exist. Please try\n550-5.1.1 double-checking the recipient's email address for typos or\n550-5.1.1 unnecessary spaces. For more information, go to\n550 5.1.1  https://support.google.com/mail/?p=NoSuchUser d2si1234 - gsmtp",
    DEAD,
    'invalid-recipient',
  ],
  [
    'Gmail',
    '550-5.2.1 The email account that you tried to reach is disabled. Learn more at\n550 5.2.1  https://support.google.com/mail/?p=DisabledUser d2si1234 - gsmtp',
    DEAD,
    'invalid-recipient',
  ],
  [
    'Gmail',
    "452-4.2.2 The recipient's inbox is out of storage space. Please direct the\n452-4.2.2 recipient to\n452 4.2.2  https://support.google.com/mail/?p=OverQuotaTemp d2si1234 - gsmtp",
    RETRY,
    'mailbox-full',
  ],
  [
    'Gmail',
    "552-5.2.2 The recipient's inbox is out of storage space and inbound mail\n552-5.2.2 cannot be delivered. Please direct the recipient to\n552 5.2.2  https://support.google.com/mail/?p=OverQuotaPerm d2si1234 - gsmtp",
    RETRY,
    'mailbox-full',
  ],
  [
    'Gmail',
    '421-4.7.0 [1.2.3.4] Our system has detected an unusual rate of\n421-4.7.0 unsolicited mail originating from your IP address. To protect our\n421-4.7.0 users from spam, mail sent from your IP address has been temporarily\n421 4.7.0 rate limited. d2si1234 - gsmtp',
    RETRY,
    'reputation-blocklist',
  ],
  [
    'Gmail',
    '550-5.7.28 [1.2.3.4] Our system has detected an unusual rate of\n550 5.7.28 unsolicited mail originating from your IP address. d2si1234 - gsmtp',
    REFUSED,
    'reputation-blocklist',
  ],
  [
    'Gmail',
    '550-5.7.26 This mail has been blocked because the sender is\n550-5.7.26 unauthenticated. Gmail requires all senders to authenticate with either\n550-5.7.26 SPF or DKIM.\n550-5.7.26\n550-5.7.26  Authentication results:\n550-5.7.26  DKIM = did not pass\n550-5.7.26  SPF [example.com] with ip: [1.2.3.4] = did not pass\n550 5.7.26  https://support.google.com/mail/answer/81126 d2si1234 - gsmtp',
    REFUSED,
    'auth-failure',
  ],
  [
    'Gmail',
    "550-5.7.26 Unauthenticated email from example.com is not accepted due to\n550 5.7.26 domain's DMARC policy. d2si1234 - gsmtp",
    REFUSED,
    'auth-failure',
  ],
  [
    'Gmail',
    '450-4.2.1 The user you are trying to contact is receiving mail at a rate that\n450-4.2.1 prevents additional messages from being delivered. Please resend your\n450 4.2.1 message at a later time. d2si1234 - gsmtp',
    RETRY,
    'rate-limited',
  ],
  [
    'Gmail',
    '550-5.7.1 [1.2.3.4] Our system has detected that this message is likely\n550-5.7.1 unsolicited mail. To reduce the amount of spam sent to Gmail,\n550 5.7.1 this message has been blocked. d2si1234 - gsmtp',
    REFUSED,
    'content-spam-block',
  ],
  [
    'Gmail',
    "550-5.7.1 [1.2.3.4] The IP you're using to send mail is not authorized to\n550-5.7.1 send email directly to our servers. Please use the SMTP relay at your\n550 5.7.1 service provider instead. d2si1234 - gsmtp",
    REFUSED,
    'reputation-blocklist',
  ],
  ['Gmail', '421-4.7.0 TLS required for RCPT domain, closing connection. d2si1234 - gsmtp', RETRY, 'policy-rejection'],
  [
    'Gmail',
    '552-5.7.0 This message was blocked because its content presents a potential\n552 5.7.0 security issue. d2si1234 - gsmtp',
    REFUSED,
    'content-spam-block',
  ],
  ['Gmail', '421-4.3.0 Temporary System Problem.  Try again later (10). d2si1234 - gsmtp', RETRY, 'unknown'],
  ['Gmail', '550 5.4.5 Daily user sending quota exceeded. d2si1234 - gsmtp', RETRY, 'rate-limited'],

  ['Outlook', '550 5.5.0 Requested action not taken: mailbox unavailable', DEAD, 'invalid-recipient'],
  [
    'Outlook',
    '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]',
    DEAD,
    'invalid-recipient',
  ],
  [
    'Outlook',
    "550 5.7.1 Unfortunately, messages from [1.2.3.4] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors. [AM5EUR02FT123.eop-EUR02.prod.protection.outlook.com]",
    REFUSED,
    'reputation-blocklist',
  ],
  [
    'Outlook',
    '451 4.7.500 Server busy. Please try again later from [1.2.3.4]. (AS843) [BN8NAM12FT012.eop-nam12.prod.protection.outlook.com]',
    RETRY,
    'rate-limited',
  ],
  [
    'Outlook',
    '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded',
    RETRY,
    'mailbox-full',
  ],
  [
    'Outlook',
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    DEAD,
    'invalid-recipient',
  ],
  ['Outlook', '550 5.1.1 RESOLVER.ADR.ExRecipNotFound; not found', DEAD, 'invalid-recipient'],
  [
    'Outlook',
    '550 5.7.606 Access denied, banned sending IP [1.2.3.4]. To request removal from this list please visit https://sender.office.com/ and follow the directions.',
    REFUSED,
    'reputation-blocklist',
  ],
  [
    'Outlook',
    '550 5.7.509 Access denied, sending domain example.com does not pass DMARC verification and has a DMARC policy of reject.',
    REFUSED,
    'auth-failure',
  ],
  [
    'Outlook',
    '550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.',
    REFUSED,
    'reputation-blocklist',
  ],
  [
    'Outlook',
    '550 5.7.520 Access denied, Your organization does not allow external forwarding.',
    REFUSED,
    'policy-rejection',
  ],
  ['Outlook', '452 4.5.3 Too many recipients', RETRY, 'rate-limited'],
  ['Outlook', '554 5.4.4 SMTPSEND.DNS.NonExistentDomain; nonexistent domain', DEAD, 'dns-mx-failure'],

  [
    'Yahoo',
    "554 delivery error: dd This user doesn't have a yahoo.com account (x@yahoo.com) [0] - mta1234.mail.ne1.yahoo.com",
    DEAD,
    'invalid-recipient',
  ],
  [
    'Yahoo',
    '421 4.7.0 [TSS04] Messages from 1.2.3.4 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
    RETRY,
    'rate-limited',
  ],
  [
    'Yahoo',
    '553 5.7.2 [TSS09] All messages from 1.2.3.4 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
    REFUSED,
    'reputation-blocklist',
  ],
  ['AOL', '552 1 Requested mail action aborted, mailbox not found', DEAD, 'invalid-recipient'],
  [
    'Yahoo',
    '554 5.7.9 Message not accepted for policy reasons.  See https://postmaster.yahooinc.com/error-codes',
    REFUSED,
    'content-spam-block',
  ],
  ['Yahoo', '554 30 Sorry, your message size exceeds 41943040 bytes.', REFUSED, 'message-too-large'],
  [
    'AOL',
    '550 Message was not accepted -- invalid mailbox.  Local mailbox x@aol.com is unavailable: user not found',
    DEAD,
    'invalid-recipient',
  ],

  [
    'Proofpoint',
    '550 5.7.1 Reject for policy reason RULE3_1.  Contact your email admin for assistance.',
    REFUSED,
    'reputation-blocklist',
  ],
  [
    'Proofpoint',
    '554 5.7.1 Service unavailable; Client host [1.2.3.4] blocked using Proofpoint Dynamic Reputation; To request removal from this list please forward this message to delist@proofpoint.com',
    REFUSED,
    'reputation-blocklist',
  ],
  ['Proofpoint', '451 4.7.1 Greylisting in action, please come back later', RETRY, 'greylisting'],
  ['Proofpoint', '550 5.1.1 User Unknown', DEAD, 'invalid-recipient'],
  ['Proofpoint', '550 5.7.0 Local Policy Violation', REFUSED, 'policy-rejection'],

  [
    'Mimecast',
    '550 Rejected by header based Anti-Spoofing policy: x@example.org - https://community.mimecast.com/docs/DOC-1369#550',
    REFUSED,
    'auth-failure',
  ],
  [
    'Mimecast',
    '550 Administrative prohibition - envelope blocked - https://community.mimecast.com/docs/DOC-1369#550',
    REFUSED,
    'policy-rejection',
  ],
  [
    'Mimecast',
    // Mimecast's own page gives this as its greylisting answer.
    '451 Internal resource temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451',
    RETRY,
    'greylisting',
  ],
  ['Mimecast', '550 Invalid recipient - https://community.mimecast.com/docs/DOC-1369#550', DEAD, 'invalid-recipient'],
  [
    'Mimecast',
    '554 Email rejected due to security policies - https://community.mimecast.com/docs/DOC-1369#554',
    REFUSED,
    'policy-rejection',
  ],
  [
    'Mimecast',
    '550 Local CT IP Reputation - (reject) - https://community.mimecast.com/docs/DOC-1369#550',
    REFUSED,
    'reputation-blocklist',
  ],

  [
    'Postfix',
    '550 5.1.1 <x@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
    DEAD,
    'invalid-recipient',
  ],
  [
    'Postfix',
    '550 5.1.1 <x@example.org>: Recipient address rejected: User unknown in local recipient table',
    DEAD,
    'invalid-recipient',
  ],
  ['Postfix', '450 4.1.8 <a@b.example>: Sender address rejected: Domain not found', RETRY, 'dns-mx-failure'],
  ['Postfix', '550 5.1.8 <a@b.example>: Sender address rejected: Domain not found', REFUSED, 'dns-mx-failure'],
  [
    'Postfix',
    '554 5.7.1 Service unavailable; Client host [1.2.3.4] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/1.2.3.4',
    REFUSED,
    'reputation-blocklist',
  ],
  [
    'Postfix',
    '550 5.1.1 <x@example.org>: Recipient address rejected: Client host [1.2.3.4] blocked using zen.spamhaus.org',
    REFUSED,
    'reputation-blocklist',
  ],
  ['Postfix', '552 5.3.4 Message size exceeds fixed limit', REFUSED, 'message-too-large'],
  ['Postfix', '450 4.7.1 Client host rejected: cannot find your hostname, [1.2.3.4]', RETRY, 'policy-rejection'],
  ['Postfix', '554 5.7.1 <x@y.example>: Relay access denied', REFUSED, 'policy-rejection'],
  ['Postfix', '452 4.3.1 Insufficient system storage', RETRY, 'unknown'],
  ['Postfix', '450 4.1.2 <x@nowhere.example>: Recipient address rejected: Domain not found', RETRY, 'dns-mx-failure'],
  ['Postfix', '550 5.1.2 <x@nowhere.example>: Recipient address rejected: Domain not found', DEAD, 'dns-mx-failure'],
  [
    'Postfix',
    '504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname',
    REFUSED,
    'policy-rejection',
  ],
  ['Postfix', '550 5.4.1 <x@example.org>: Recipient address rejected: Access denied', REFUSED, 'policy-rejection'],
  [
    'Postfix',
    '450 4.7.1 <x@y.example>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/y.example.html',
    RETRY,
    'greylisting',
  ],
  ['Postfix', '452 4.5.3 Error: too many recipients', RETRY, 'rate-limited'],

  // decisions.md lists "unroutable" under dns-mx-failure: not proof the mailbox is dead.
  ['Exim', '550 Unrouteable address', REFUSED, 'dns-mx-failure'],
  ['Exim', '550-Verification failed for <x@y.example>\n550 Unrouteable address', REFUSED, 'policy-rejection'],
  ['Exim', '451 Temporary local problem - please try later', RETRY, 'unknown'],
  ['Exim', '550 5.7.1 Message rejected as spam by Content Filtering', REFUSED, 'content-spam-block'],
  ['Exim', '550 Administrative prohibition', REFUSED, 'policy-rejection'],
  ['Exim', '550 No Such User Here', DEAD, 'invalid-recipient'],
  ['Exim', '550 rejected because 1.2.3.4 is in a black list at zen.spamhaus.org', REFUSED, 'reputation-blocklist'],
  ['Exim', '552 Message size exceeds maximum permitted', REFUSED, 'message-too-large'],
  ['Exim', '550 relay not permitted', REFUSED, 'policy-rejection'],
  ['Exim', '421 Lost incoming connection', RETRY, 'connection-error'],

  ['qmail', "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", REFUSED, 'policy-rejection'],
  ['qmail', '511 sorry, no mailbox here by that name (#5.1.1)', DEAD, 'invalid-recipient'],
  ['sendmail', '550 5.1.1 <x@example.org>... User unknown', DEAD, 'invalid-recipient'],
  [
    'sendmail',
    '553 5.1.8 <a@b.example>... Domain of sender address a@b.example does not exist',
    REFUSED,
    'dns-mx-failure',
  ],
  ['sendmail', '550 5.1.2 Host unknown', DEAD, 'dns-mx-failure'],

  ['generic', '421 Too many concurrent SMTP connections; please try again later', RETRY, 'rate-limited'],
  ['generic', '421 Service not available, closing transmission channel', RETRY, 'connection-error'],
  ['generic', '554 5.7.9 Message not accepted for policy reasons', REFUSED, 'content-spam-block'],
  ['generic', '550 5.2.1 Mailbox disabled', DEAD, 'invalid-recipient'],
  ['generic', '550 5.1.1 Mailbox does not exist', DEAD, 'invalid-recipient'],
  ['generic', '550 5.1.2 Host unknown', DEAD, 'dns-mx-failure'],
  ['generic', '556 5.1.10 Recipient address has null MX', DEAD, 'invalid-recipient'],
  ['generic', '554 5.4.4 Unable to route: no mail hosts for domain', REFUSED, 'dns-mx-failure'],
  ['generic', '550 5.7.23 SPF validation failed', REFUSED, 'auth-failure'],
  ['generic', '550 5.7.0 Authentication required', REFUSED, 'auth-failure'],
  ['generic', '530 5.7.0 Must issue a STARTTLS command first', REFUSED, 'policy-rejection'],
  ['generic', '552 5.2.3 Message exceeds maximum size', REFUSED, 'message-too-large'],
  ['generic', '552 5.3.4 Message too big for system', REFUSED, 'message-too-large'],
  ['generic', '550 5.7.1 Your IP address 1.2.3.4 has been blocked', REFUSED, 'reputation-blocklist'],
  ['generic', '451 4.7.1 Please try again later', RETRY, 'unknown'],
  ['generic', '451 4.7.1 Greylisting in action, please come back later', RETRY, 'greylisting'],
  ['generic', '450 4.2.0 Mailbox busy', RETRY, 'unknown'],
  ['generic', '550 Requested action not taken: mailbox unavailable', DEAD, 'invalid-recipient'],
  ['generic', '550', REFUSED, 'unknown'],
  ['generic', '554 Transaction failed', REFUSED, 'unknown'],
  ['generic', '552 Requested mail action aborted: exceeded storage allocation', RETRY, 'mailbox-full'],
  ['generic', '550 5.7.1 Message rejected: virus found in attachment', REFUSED, 'content-spam-block'],
];

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
