import { describe, expect, it } from 'vitest';
import { classifyReply, type BounceCategory, type Outcome } from './classify.ts';

// Replies in the words the big providers and the common MTAs use, as their postmaster
// pages and the MTAs' sources document them, labelled by the "Bounce categories" of
// design/decisions.md: what the reply is about (text before codes where they disagree,
// the first category that fits in its order), and the three outcomes of a recipient
// attempt (hard only for a dead address; mailbox full, greylisting and rate limits are
// retried whatever their code; any other 5xx is a soft, final bounce; any 4xx retries).
type Row = [provider: string, reply: string, outcome: Outcome, category: BounceCategory];

const ROWS: Row[] = [
  // Google (support.google.com/a/answer/3726730).
  ['Gmail', '550 5.1.1 The email account that you tried to reach does not exist.', 'hard', 'invalid-recipient'],
  ['Gmail', '550 5.2.1 The email account that you tried to reach is disabled.', 'hard', 'invalid-recipient'],
  [
    'Gmail',
    '553 5.1.3 The recipient address <a b@gmail.com> is not a valid RFC 5321 address.',
    'hard',
    'invalid-recipient',
  ],
  ['Gmail', "452 4.2.2 The recipient's inbox is out of storage space.", 'retry', 'mailbox-full'],
  ['Gmail', "552 5.3.4 Your message exceeded Google's message size limits.", 'soft', 'message-too-large'],
  [
    'Gmail',
    '550 5.7.1 Our system has detected that this message is likely unsolicited mail. To reduce the amount of spam sent to Gmail, this message has been blocked.',
    'soft',
    'content-spam-block',
  ],
  [
    'Gmail',
    '552 5.7.0 This message was blocked because its content presents a potential security issue.',
    'soft',
    'content-spam-block',
  ],
  [
    'Gmail',
    "550 5.7.1 [1.2.3.4] The IP you're using to send mail is not authorized to send email directly to our servers.",
    'soft',
    'reputation-blocklist',
  ],
  [
    'Gmail',
    '421 4.7.28 [1.2.3.4] Our system has detected an unusual rate of unsolicited mail originating from your IP address.',
    'retry',
    'reputation-blocklist',
  ],
  [
    'Gmail',
    '421 4.7.0 This message does not have authentication information or fails to pass authentication checks (SPF or DKIM).',
    'retry',
    'auth-failure',
  ],
  [
    'Gmail',
    "550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy.",
    'soft',
    'auth-failure',
  ],
  [
    'Gmail',
    '550 5.7.25 [1.2.3.4] The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP.',
    'soft',
    'policy-rejection',
  ],
  ['Gmail', '421 4.7.0 TLS required for RCPT domain, closing connection.', 'retry', 'policy-rejection'],
  [
    'Gmail',
    '550 5.7.1 Messages missing a valid address in From: header, or having no From: header, are not accepted.',
    'soft',
    'policy-rejection',
  ],
  [
    'Gmail',
    '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.',
    'retry',
    'rate-limited',
  ],
  ['Gmail', '550 5.4.5 Daily user sending quota exceeded.', 'retry', 'rate-limited'],
  ['Gmail', '452 4.5.3 Your message has too many recipients.', 'retry', 'rate-limited'],
  ['Gmail', '421 4.4.5 Server busy, try again later.', 'retry', 'connection-error'],
  ['Gmail', '451 4.3.0 Mail server temporarily rejected message.', 'retry', 'unknown'],

  // Microsoft 365, Outlook.com (learn.microsoft.com NDR reference, sendersupport.olc.protection.outlook.com).
  ['Outlook', '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302).', 'hard', 'invalid-recipient'],
  ['Outlook', '550 5.4.1 Recipient address rejected: Access denied. AS(201806281)', 'hard', 'invalid-recipient'],
  [
    'Outlook',
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    'hard',
    'invalid-recipient',
  ],
  [
    'Outlook',
    "550 5.7.1 Unfortunately, messages from [1.2.3.4] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150).",
    'soft',
    'reputation-blocklist',
  ],
  [
    'Outlook',
    '451 4.7.650 The mail server [1.2.3.4] has been temporarily rate limited due to IP reputation.',
    'retry',
    'reputation-blocklist',
  ],
  ['Outlook', '550 5.7.606 Access denied, banned sending IP [1.2.3.4].', 'soft', 'reputation-blocklist'],
  [
    'Outlook',
    '550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.',
    'soft',
    'reputation-blocklist',
  ],
  ['Outlook', '451 4.7.500 Server busy. Please try again later from [1.2.3.4]. (S77714)', 'retry', 'connection-error'],
  [
    'Outlook',
    '550 5.7.509 Access denied, sending domain example.com does not pass DMARC verification and has a DMARC policy of reject.',
    'soft',
    'auth-failure',
  ],
  [
    'Outlook',
    "550 5.7.515 Access denied, sending domain [example.com] doesn't meet the required authentication level.",
    'soft',
    'auth-failure',
  ],
  [
    'Outlook',
    '550 5.7.520 Message blocked because it contains content identified as spam.',
    'soft',
    'content-spam-block',
  ],
  [
    'Outlook',
    '552 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient',
    'soft',
    'message-too-large',
  ],
  ['Outlook', '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException', 'retry', 'mailbox-full'],
  ['Outlook', '550 5.4.1 Relay Access Denied', 'soft', 'policy-rejection'],
  ['Outlook', '550 5.7.57 Client not authenticated to send mail.', 'soft', 'auth-failure'],
  [
    'Outlook',
    '451 4.4.0 DNS query failed. The error was: DNS query failed with error ErrorRetry',
    'retry',
    'dns-mx-failure',
  ],
  ['Exchange', '554 5.4.4 SMTPSEND.DNS.NonExistentDomain; nonexistent domain', 'hard', 'dns-mx-failure'],
  ['Exchange', '554 5.4.14 Hop count exceeded - possible mail loop ATTR34', 'soft', 'unknown'],
  ['Exchange', '452 4.3.1 Insufficient system resources', 'retry', 'unknown'],
  ['Exchange', '432 4.3.2 STOREDRV.ClientSubmit; sender thread limit exceeded', 'retry', 'rate-limited'],

  // Yahoo, AOL, Verizon (senders.yahooinc.com/smtp-error-codes).
  [
    'Yahoo',
    '421 4.7.0 [TSS04] Messages from 1.2.3.4 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1',
    'retry',
    'rate-limited',
  ],
  [
    'Yahoo',
    '554 5.7.9 [TSS09] All messages from 1.2.3.4 will be permanently deferred; Retrying will NOT succeed.',
    'soft',
    'reputation-blocklist',
  ],
  ['Yahoo', '554 5.7.9 Message not accepted for policy reasons.', 'soft', 'content-spam-block'],
  ['Yahoo', '421 4.7.0 [GL01] Message from (1.2.3.4) temporarily deferred - 4.16.50.', 'retry', 'greylisting'],
  [
    'Yahoo',
    "554 delivery error: dd This user doesn't have a yahoo.com account (a@yahoo.com) [0] - mta1.mail.bf1.yahoo.com",
    'hard',
    'invalid-recipient',
  ],
  [
    'Yahoo',
    '554 delivery error: dd Sorry your message to a@yahoo.com cannot be delivered. This mailbox is disabled (554.30).',
    'hard',
    'invalid-recipient',
  ],
  [
    'Yahoo',
    '550 5.7.9 This mail has been blocked because the sender is unauthenticated. Yahoo requires all senders to authenticate with either SPF or DKIM.',
    'soft',
    'auth-failure',
  ],
  [
    'AOL',
    "553 5.7.1 [BL21] Connections will not be accepted from 1.2.3.4, because the ip is in Spamhaus's list",
    'soft',
    'reputation-blocklist',
  ],

  // Apple iCloud (support.apple.com/HT204137).
  ['iCloud', '550 5.1.1 <a@icloud.com>: user does not exist', 'hard', 'invalid-recipient'],
  ['iCloud', '554 5.7.1 [CS01] Message rejected due to local policy.', 'soft', 'content-spam-block'],
  ['iCloud', '452 4.2.2 <a@icloud.com>: user is over quota', 'retry', 'mailbox-full'],
  [
    'iCloud',
    '550 5.7.0 Blocked - see https://support.proofpoint.com/dnsbl-lookup.cgi?ip=1.2.3.4',
    'soft',
    'reputation-blocklist',
  ],

  // ISPs: Comcast, AT&T, Cox, T-Online, GMX.
  [
    'Comcast',
    '554 resimta-h1p-1 comcast 1.2.3.4 found on one or more DNSBLs, see http://postmaster.comcast.net/smtp-error-codes.php#BL000001',
    'soft',
    'reputation-blocklist',
  ],
  ['Comcast', '550 5.1.1 <a@comcast.net> Not our Customer', 'hard', 'invalid-recipient'],
  ['Comcast', '421 4.2.0 Too many sessions opened; see RL000001', 'retry', 'rate-limited'],
  [
    'AT&T',
    '553 5.3.0 flpd575 DNSBL:RBL 521< 1.2.3.4 >_is_blocked.For assistance forward this error to abuse_rbl@abuse-att.net',
    'soft',
    'reputation-blocklist',
  ],
  ['Cox', '550 5.1.1 <a@cox.net> recipient rejected', 'hard', 'invalid-recipient'],
  ['GMX', '550 5.1.1 Requested action not taken: mailbox unavailable', 'hard', 'invalid-recipient'],
  ['GMX', '452 4.2.2 Mailbox quota exceeded', 'retry', 'mailbox-full'],

  // Mail.ru, Yandex, QQ, NetEase.
  [
    'Mail.ru',
    '550 Message was not accepted -- invalid mailbox. Local mailbox a@mail.ru is unavailable: account is disabled',
    'hard',
    'invalid-recipient',
  ],
  [
    'Mail.ru',
    '550 spam message rejected. Please visit http://help.mail.ru/notspam-support/id?c=abc',
    'soft',
    'content-spam-block',
  ],
  ['Yandex', '550 5.7.1 No such user!', 'hard', 'invalid-recipient'],
  ['Yandex', '554 5.7.1 [2] Message rejected under suspicion of SPAM', 'soft', 'content-spam-block'],
  [
    'QQ',
    '550 Mailbox not found. http://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022',
    'hard',
    'invalid-recipient',
  ],
  [
    'QQ',
    '550 Mail content denied. http://service.mail.qq.com/cgi-bin/help?subtype=1&&no=1000726',
    'soft',
    'content-spam-block',
  ],
  [
    'QQ',
    '451 Ip frequency limited. http://service.mail.qq.com/cgi-bin/help?subtype=1&&no=1000722',
    'retry',
    'rate-limited',
  ],
  ['QQ', '550 Domain frequency limited', 'retry', 'rate-limited'],
  [
    'NetEase',
    '554 DT:SPM 163 smtp10,DsCowAD,abc please see http://mail.163.com/help/help_spam_16.htm?ip=1.2.3.4',
    'soft',
    'content-spam-block',
  ],
  ['NetEase', '550 User not found: a@163.com', 'hard', 'invalid-recipient'],

  // Filters: Proofpoint, Mimecast, Barracuda, Cisco, Trend Micro, Sophos.
  ['Proofpoint', '554 5.7.1 Blocked - see https://ipcheck.proofpoint.com/?ip=1.2.3.4', 'soft', 'reputation-blocklist'],
  ['Proofpoint', '554 5.7.1 Message blocked due to spam content in the message.', 'soft', 'content-spam-block'],
  ['Proofpoint', '550 5.7.0 Local Policy Violation', 'soft', 'policy-rejection'],
  ['Mimecast', '550 Rejected by header based Anti-Spoofing policy: a@example.com', 'soft', 'auth-failure'],
  [
    'Mimecast',
    '550 Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550',
    'soft',
    'policy-rejection',
  ],
  // Mimecast's DOC-1369 gives this as its greylisting answer.
  [
    'Mimecast',
    '451 Internal resource temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451',
    'retry',
    'greylisting',
  ],
  ['generic', '451 Internal resources are temporarily unavailable. Please try again later.', 'retry', 'unknown'],
  ['Mimecast', '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550', 'hard', 'invalid-recipient'],
  ['Mimecast', '451 Mimecast Greylisting in action, please come back later', 'retry', 'greylisting'],
  [
    'Barracuda',
    '554 Service unavailable; Client host [1.2.3.4] blocked using Barracuda Reputation; http://www.barracudanetworks.com/reputation/?pr=1&ip=1.2.3.4',
    'soft',
    'reputation-blocklist',
  ],
  [
    'Barracuda',
    '421 Too many concurrent SMTP connections from this IP address; please try again later.',
    'retry',
    'rate-limited',
  ],
  [
    'Cisco',
    "554 Your access to this mail system has been rejected due to the sending MTA's poor reputation.",
    'soft',
    'reputation-blocklist',
  ],
  ['Cisco', '550 #5.1.0 Address rejected a@example.com', 'hard', 'invalid-recipient'],
  [
    'Trend Micro',
    '550 5.7.1 Mail from 1.2.3.4 refused, see http://www.mail-abuse.com/cgi-bin/lookup?ip_address=1.2.3.4',
    'soft',
    'reputation-blocklist',
  ],
  ['Sophos', '550 5.7.1 Message rejected due to content restrictions', 'soft', 'content-spam-block'],

  // MTAs' own replies: Postfix, Exim, Sendmail, qmail.
  ['Postfix', '450 4.1.8 <bounce@our.example>: Sender address rejected: Domain not found', 'retry', 'dns-mx-failure'],
  ['Postfix', '550 5.1.8 <bounce@our.example>: Sender address rejected: Domain not found', 'soft', 'dns-mx-failure'],
  [
    'Postfix',
    '450 4.7.1 Client host rejected: cannot find your reverse hostname, [1.2.3.4]',
    'retry',
    'policy-rejection',
  ],
  ['Postfix', '550 5.7.1 Client host rejected: cannot find your hostname, [1.2.3.4]', 'soft', 'policy-rejection'],
  ['Postfix', '530 5.7.0 Must issue a STARTTLS command first', 'soft', 'policy-rejection'],
  ['Postfix', '452 4.3.1 Insufficient system storage', 'retry', 'unknown'],
  ['Postfix', '451 4.3.0 Error: queue file write error', 'retry', 'unknown'],
  ['Postfix', '451 4.3.5 Server configuration problem', 'retry', 'unknown'],
  ['Postfix', '421 4.7.0 mx.example.com Error: too many connections from 1.2.3.4', 'retry', 'rate-limited'],
  ['Postfix', '450 4.1.2 <a@gone.example>: Recipient address rejected: Domain not found', 'retry', 'dns-mx-failure'],
  ['Postfix', '550 5.1.2 <a@gone.example>: Recipient address rejected: Domain not found', 'hard', 'dns-mx-failure'],
  ['Postfix', '550 5.1.1 <a@example.com>: Recipient address rejected: Recipient unknown', 'hard', 'invalid-recipient'],
  ['Exim', '451 Temporary local problem - please try later', 'retry', 'unknown'],
  ['Exim', '451 Could not complete sender verify callout', 'retry', 'policy-rejection'],
  [
    'Sendmail',
    '553 5.1.8 <bounce@our.example>... Domain of sender address bounce@our.example does not exist',
    'soft',
    'dns-mx-failure',
  ],
  ['Sendmail', '451 4.1.8 Domain of sender address bounce@our.example does not resolve', 'retry', 'dns-mx-failure'],
  ['Sendmail', '452 4.4.5 Insufficient disk space; try again later', 'retry', 'unknown'],
  ['Sendmail', '550 5.1.1 <a@example.com>... Addressee unknown', 'hard', 'invalid-recipient'],
  ['qmail', '451 DNS temporary failure (#4.3.0)', 'retry', 'dns-mx-failure'],
  ['qmail', '451 qq temporary problem (#4.3.0)', 'retry', 'unknown'],
  ['qmail', '553 sorry, your envelope sender has been denied (#5.7.1)', 'soft', 'policy-rejection'],

  ['Postfix', '451 4.4.7 Message delayed: delivery time expired', 'retry', 'connection-error'],
  ['Postfix', '554 5.4.6 Too many hops', 'soft', 'unknown'],
  ['generic', '452 4.2.1 Recipient is receiving too much mail, try again later', 'retry', 'rate-limited'],
  ['generic', '421 4.7.0 Message deferred due to excessive volume from your domain', 'retry', 'rate-limited'],

  // No reason at all.
  ['generic', '554 5.0.0 Transaction failed', 'soft', 'unknown'],
  ['generic', '550 Rejected', 'soft', 'unknown'],
];

describe('classifyReply on providers’ documented replies', () => {
  it.each(ROWS)('%s: %s', (_provider, raw, outcome, category) => {
    const m = /^(\d{3})[ -](?:([245]\.\d{1,3}\.\d{1,3}) )?/.exec(raw);
    const result = classifyReply({ code: Number(m?.[1]), enhanced: m?.[2] ?? null, text: raw });
    expect({ outcome: result.outcome, category: result.category }).toEqual({ outcome, category });
    // Only a dead address suppresses (decisions.md): never one aimed at us or our sender.
    expect(result.suppress).toBe(outcome === 'hard');
  });

  it('covers every category but delivered ones', () => {
    expect(new Set(ROWS.map((r) => r[3])).size).toBe(12);
  });
});
