// The classifier's table of replies as servers send them (classify.test.ts reads it): a data
// table, kept apart from the tests so each file stays readable (style.md: past 500 lines, only
// with a reason). Each row: who sends it, the reply with its basic code, what svc must decide,
// and the bounce category.
import type { BounceCategory } from './classify.ts';

// The three outcomes of decisions.md ("Email lifecycle"), plus acceptance.
export const DELIVERED = { outcome: 'delivered', bounce_type: null, suppress: false } as const;
export const DEAD = { outcome: 'hard', bounce_type: 'hard', suppress: true } as const;
export const REFUSED = { outcome: 'soft', bounce_type: 'soft', suppress: false } as const;
export const RETRY = { outcome: 'retry', bounce_type: null, suppress: false } as const;
export type Expected = typeof DELIVERED | typeof DEAD | typeof REFUSED | typeof RETRY;

export type Row = [from: string, reply: string, expected: Expected, category: BounceCategory | null];

// Replies as servers send them, basic code and all; see asParsed and asRaw below.
export const ROWS: Row[] = [
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
