// The bounce-attribution corpus (issue 36, item 2): which recipient does a late bounce or a
// complaint mark, under one SMTP transaction per recipient (each with its own return path, what
// svc does) and under one transaction per destination (one return path per email and
// destination, the recipient read from the report)? Genuine reports, written in the formats of
// the MTAs that send them, and forged ones, written by a co-recipient who read the Return-Path of
// their own copy, or by an outsider. test/bounce-attribution.test.ts runs the per-recipient
// scheme through svc itself; the per-destination scheme is the rule `perDestination` below, since
// svc has no such mode. Figures and the decision: docs/decisions.md, "Bounces are matched by their
// return path".
// Past 500 lines (style.md): a corpus of reports, data more than code, read whole by its test.
import { xtextDecoded, type InboundReport } from '../src/inbound/index.ts';

/** The formats a report is written in: RFC 3464 DSNs as each MTA writes them, plain-text bounces, ARF. */
export type Style = 'postfix' | 'exchange' | 'gmail' | 'sendmail' | 'exim' | 'qmail-text' | 'exim-text' | 'arf';

/** How a report names one recipient (`recipient`: an address of the email, as written in `Case.to`). */
export interface Named {
  recipient: string;
  /** The address the report gives as Final-Recipient (or the text bounce's, the complaint's To); default the recipient. */
  final?: (recipient: string) => string;
  /**
   * Original-Recipient: the ORCPT the reporting MTA received, copied as RFC 3464 says (`orcpt`,
   * xtext decoded) or as sent (`orcpt-xtext`); none when the relay dropped it or the format has none.
   */
  original?: 'orcpt' | 'orcpt-xtext';
  action?: 'failed' | 'delayed';
  status?: string;
  diagnostic?: string;
}

export interface Case {
  id: string;
  kind: 'genuine' | 'forged' | 'ambiguous';
  about: string;
  style: Style;
  /** The email's recipients (made unique per case by `addressIn`). */
  to: string[];
  /**
   * genuine and ambiguous: what the recipients' mail systems report, each to the return path
   * of the transaction that carried that recipient.
   * forged: what the forger's report names.
   */
  named: Named[];
  /** forged: who writes the report: a co-recipient with the return path of their copy, or an outsider. */
  forger?: { recipient: string } | { outsider: 'wrong-tag' | 'other-email' };
  /** The recipients the report should mark (bounced or complained). */
  truth: string[];
}

/** `local@domain` of a case, made unique to it: ann@dest.test → ann.g1@dest.test (a sub-address stays last). */
export function addressIn(c: Case, address: string): string {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const plus = local.indexOf('+');
  const base = plus < 0 ? local : local.slice(0, plus);
  return `${base}.${c.id}${plus < 0 ? '' : local.slice(plus)}${address.slice(at)}`.toLowerCase();
}

const UNKNOWN = { status: '5.1.1', diagnostic: '550 5.1.1 <{rcpt}>: Recipient address rejected: User unknown' };
const forward = (target: string) => () => target;
const upper = (a: string) => a.toUpperCase();
const stripped = (a: string) => a.replace(/\+[^@]*@/, '@');

export const CASES: Case[] = [
  // One recipient's mailbox is gone, reported by the usual MTAs, naming the address svc sent to.
  {
    id: 'g1',
    kind: 'genuine',
    about: 'Postfix, ORCPT copied',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test', 'cat@dest.test'],
    named: [{ recipient: 'ann@dest.test', original: 'orcpt', ...UNKNOWN }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g2',
    kind: 'genuine',
    about: 'Microsoft 365, 5.1.10',
    style: 'exchange',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [
      {
        recipient: 'ann@dest.test',
        original: 'orcpt',
        status: '5.1.10',
        diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
      },
    ],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g3',
    kind: 'genuine',
    about: 'Gmail (no Original-Recipient)',
    style: 'gmail',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [
      {
        recipient: 'ann@dest.test',
        status: '5.1.1',
        diagnostic:
          "550-5.1.1 The email account that you tried to reach does not exist. Please try 550 5.1.1 double-checking the recipient's email address",
      },
    ],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g4',
    kind: 'genuine',
    about: 'Sendmail',
    style: 'sendmail',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [
      {
        recipient: 'ann@dest.test',
        original: 'orcpt',
        status: '5.1.1',
        diagnostic: '550 5.1.1 <{rcpt}>... User unknown',
      },
    ],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g5',
    kind: 'genuine',
    about: 'qmail, plain text',
    style: 'qmail-text',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g6',
    kind: 'genuine',
    about: 'Exim, plain text',
    style: 'exim-text',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g7',
    kind: 'genuine',
    about: 'Exim DSN, the address in capitals',
    style: 'exim',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: upper, status: '5.0.0', diagnostic: '550 No such user here' }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g8',
    kind: 'genuine',
    about: 'mailbox full, given up on (a soft bounce)',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [
      {
        recipient: 'ann@dest.test',
        original: 'orcpt',
        status: '4.2.2',
        diagnostic: '452 4.2.2 <{rcpt}>: Mailbox full',
      },
    ],
    truth: ['ann@dest.test'],
  },
  {
    id: 'g9',
    kind: 'genuine',
    about: 'two recipients at one destination both gone',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test', 'cat@dest.test'],
    named: [
      { recipient: 'ann@dest.test', original: 'orcpt', ...UNKNOWN },
      { recipient: 'cat@dest.test', original: 'orcpt', ...UNKNOWN },
    ],
    truth: ['ann@dest.test', 'cat@dest.test'],
  },
  // The address svc sent to forwards, and the forward's target is gone: the report names the target.
  {
    id: 'f1',
    kind: 'genuine',
    about: 'forwarded, the relay kept ORCPT (Postfix)',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('ann.smith@closed.test'), original: 'orcpt', ...UNKNOWN }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'f2',
    kind: 'genuine',
    about: 'forwarded, the relay dropped ORCPT (Postfix)',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('ann.smith@closed.test'), ...UNKNOWN }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'f3',
    kind: 'genuine',
    about: 'forwarded, Microsoft 365 reports the target',
    style: 'exchange',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [
      {
        recipient: 'ann@dest.test',
        final: forward('asmith@closed.test'),
        status: '5.1.10',
        diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
      },
    ],
    truth: ['ann@dest.test'],
  },
  {
    id: 'f4',
    kind: 'genuine',
    about: 'forwarded, qmail names the target in text',
    style: 'qmail-text',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('ann@oldisp.test'), ...UNKNOWN }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'f5',
    kind: 'genuine',
    about: 'two aliases forwarding to one closed domain, ORCPT dropped',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test', 'cat@dest.test'],
    named: [
      { recipient: 'ann@dest.test', final: forward('ann@closed.test'), ...UNKNOWN },
      { recipient: 'cat@dest.test', final: forward('cat@closed.test'), ...UNKNOWN },
    ],
    truth: ['ann@dest.test', 'cat@dest.test'],
  },
  {
    id: 's1',
    kind: 'genuine',
    about: 'sub-address dropped by the server, no ORCPT',
    style: 'postfix',
    to: ['ann+news@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann+news@dest.test', final: stripped, ...UNKNOWN }],
    truth: ['ann+news@dest.test'],
  },
  {
    id: 's2',
    kind: 'genuine',
    about: 'sub-address dropped, ORCPT copied without decoding its xtext',
    style: 'sendmail',
    to: ['ann+news@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann+news@dest.test', final: stripped, original: 'orcpt-xtext', ...UNKNOWN }],
    truth: ['ann+news@dest.test'],
  },
  {
    id: 'c1',
    kind: 'genuine',
    about: 'a complaint (ARF) naming the recipient',
    style: 'arf',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test' }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'c2',
    kind: 'genuine',
    about: 'a complaint with the recipient redacted, as feedback loops send them',
    style: 'arf',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('redacted@dest.test') }],
    truth: ['ann@dest.test'],
  },
  {
    id: 'd1',
    kind: 'genuine',
    about: 'a delay notice: nothing to record',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [
      {
        recipient: 'ann@dest.test',
        original: 'orcpt',
        action: 'delayed',
        status: '4.4.1',
        diagnostic: '421 4.4.1 connection timed out',
      },
    ],
    truth: [],
  },
  // An alias that expands to two addresses, one of them gone: is the alias bounced? Reported apart.
  {
    id: 'a1',
    kind: 'ambiguous',
    about: 'an alias fans out, one of its two targets is gone, ORCPT dropped',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('ann@work.test'), ...UNKNOWN }],
    truth: [],
  },
  {
    id: 'a2',
    kind: 'ambiguous',
    about: 'the same, ORCPT kept',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('ann@work.test'), original: 'orcpt', ...UNKNOWN }],
    truth: [],
  },
  // Forged: bob, a co-recipient, writes to the return path of his own copy.
  {
    id: 'x1',
    kind: 'forged',
    about: 'co-recipient at the same domain: a DSN naming ann',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test', 'cat@dest.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    forger: { recipient: 'bob@dest.test' },
    truth: [],
  },
  {
    id: 'x2',
    kind: 'forged',
    about: 'co-recipient: a DSN naming ann and cat',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test', 'cat@dest.test'],
    named: [
      { recipient: 'ann@dest.test', ...UNKNOWN },
      { recipient: 'cat@dest.test', ...UNKNOWN },
    ],
    forger: { recipient: 'bob@dest.test' },
    truth: [],
  },
  {
    id: 'x3',
    kind: 'forged',
    about: 'co-recipient: ann only as Original-Recipient, a made-up Final-Recipient',
    style: 'sendmail',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: forward('nobody@closed.test'), original: 'orcpt', ...UNKNOWN }],
    forger: { recipient: 'bob@dest.test' },
    truth: [],
  },
  {
    id: 'x4',
    kind: 'forged',
    about: 'co-recipient: a qmail-style text bounce naming ann',
    style: 'qmail-text',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    forger: { recipient: 'bob@dest.test' },
    truth: [],
  },
  {
    id: 'x5',
    kind: 'forged',
    about: 'co-recipient: ann in capitals',
    style: 'exim',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', final: upper, status: '5.0.0', diagnostic: '550 No such user here' }],
    forger: { recipient: 'bob@dest.test' },
    truth: [],
  },
  {
    id: 'x6',
    kind: 'forged',
    about: 'co-recipient: a complaint (ARF) with Original-Rcpt-To ann',
    style: 'arf',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test' }],
    forger: { recipient: 'bob@dest.test' },
    truth: [],
  },
  {
    id: 'x7',
    kind: 'forged',
    about: 'co-recipient at another domain: a DSN naming ann',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@other.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    forger: { recipient: 'bob@other.test' },
    truth: [],
  },
  {
    id: 'x8',
    kind: 'forged',
    about: 'outsider who knows the email id, with a made-up tag',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    forger: { outsider: 'wrong-tag' },
    truth: [],
  },
  {
    id: 'x9',
    kind: 'forged',
    about: 'outsider with the return path of another email they got',
    style: 'postfix',
    to: ['ann@dest.test', 'bob@dest.test'],
    named: [{ recipient: 'ann@dest.test', ...UNKNOWN }],
    forger: { outsider: 'other-email' },
    truth: [],
  },
];

/** A block of a report, with the case's addresses filled in. */
export interface Block {
  final: string;
  original: string | null;
  action: string;
  status: string;
  diagnostic: string;
}

/** `n` as the report's block for the email address `address`, `orcpt` the ORCPT its MTA received (decoded). */
export function blockOf(n: Named, address: string, orcpt: string | null): Block {
  const decoded = orcpt?.replace(/^rfc822;/i, '') ?? null;
  const xtext = decoded?.replace(/[+=]/g, (c) => `+${c.charCodeAt(0).toString(16).toUpperCase()}`) ?? null;
  return {
    final: (n.final ?? ((a: string) => a))(address),
    original: n.original === 'orcpt' ? decoded : n.original === 'orcpt-xtext' ? xtext : null,
    action: n.action ?? 'failed',
    status: n.status ?? '5.1.1',
    diagnostic: (n.diagnostic ?? '550 5.1.1 user unknown').replaceAll('{rcpt}', address),
  };
}

const DATE = 'Sun, 29 Nov 2026 09:00:00 +0000';

/** The report `style` writes to the return path `to` about `blocks` (the original message's headers quoted). */
export function reportText(style: Style, to: string, blocks: Block[]): string {
  if (style === 'arf') return arfText(to, blocks[0]!.final);
  if (style === 'qmail-text') return qmailText(to, blocks);
  if (style === 'exim-text') return eximText(to, blocks);
  const f = FORMATS[style];
  const status = [
    ...f.head,
    '',
    blocks
      .map((b) =>
        f
          .block(b)
          .filter((l): l is string => l !== null)
          .join('\r\n'),
      )
      .join('\r\n\r\n'),
  ].join('\r\n');
  return [
    `From: ${f.from}`,
    `To: ${to}`,
    `Subject: ${f.subject}`,
    `Date: ${DATE}`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="=_report"',
    '',
    '--=_report',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    f.text,
    '',
    '--=_report',
    'Content-Type: message/delivery-status',
    '',
    status,
    '',
    '--=_report',
    'Content-Type: text/rfc822-headers',
    '',
    quoted(to),
    '--=_report--',
    '',
  ].join('\r\n');
}

const quoted = (rp: string) =>
  [`Return-Path: <${rp}>`, 'From: news@sender.test', 'To: undisclosed', 'Subject: Hello', ''].join('\r\n');

const fold = (s: string) => s.replace(/ (\S+ \S+)$/, '\r\n    $1');

const FORMATS: Record<
  Exclude<Style, 'arf' | 'qmail-text' | 'exim-text'>,
  { from: string; subject: string; text: string; head: string[]; block: (b: Block) => (string | null)[] }
> = {
  postfix: {
    from: 'MAILER-DAEMON@mx.dest.test (Mail Delivery System)',
    subject: 'Undelivered Mail Returned to Sender',
    text: "This is the mail system at host mx.dest.test.\r\n\r\nI'm sorry to have to inform you that your message could not\r\nbe delivered to one or more recipients.",
    head: ['Reporting-MTA: dns; mx.dest.test', 'X-Postfix-Queue-ID: 4N1xQk2Zr9z9rwl', `Arrival-Date: ${DATE}`],
    block: (b) => [
      `Final-Recipient: rfc822; ${b.final}`,
      b.original ? `Original-Recipient: rfc822;${b.original}` : null,
      `Action: ${b.action}`,
      `Status: ${b.status}`,
      'Remote-MTA: dns; mailbox.dest.test',
      `Diagnostic-Code: smtp; ${fold(b.diagnostic)}`,
    ],
  },
  exchange: {
    from: 'postmaster@dest.test',
    subject: 'Undeliverable: Hello',
    text: "Your message to the recipient couldn't be delivered.",
    head: [
      'Reporting-MTA: dns;AM0PR01MB1234.eurprd01.prod.exchangelabs.com',
      'Received-From-MTA: dns;mta.svc.test',
      `Arrival-Date: ${DATE}`,
    ],
    block: (b) => [
      b.original ? `Original-Recipient: rfc822;${b.original}` : null,
      `Final-Recipient: rfc822;${b.final}`,
      `Action: ${b.action}`,
      `Status: ${b.status}`,
      `Diagnostic-Code: smtp;${b.diagnostic}`,
      `X-Display-Name: ${b.final}`,
    ],
  },
  gmail: {
    from: 'Mail Delivery Subsystem <mailer-daemon@googlemail.com>',
    subject: 'Delivery Status Notification (Failure)',
    text: "Your message wasn't delivered because the address couldn't be found.",
    head: ['Reporting-MTA: dns; googlemail.com', `Arrival-Date: ${DATE}`, 'X-Original-Message-ID: <x@svc.test>'],
    block: (b) => [
      `Final-Recipient: rfc822; ${b.final}`,
      `Action: ${b.action}`,
      `Status: ${b.status}`,
      'Remote-MTA: dns; mx.dest.test. (127.0.0.1, the server for the domain dest.test.)',
      `Diagnostic-Code: smtp; ${fold(b.diagnostic)}`,
      `Last-Attempt-Date: ${DATE}`,
    ],
  },
  sendmail: {
    from: 'Mail Delivery Subsystem <MAILER-DAEMON@mx.dest.test>',
    subject: 'Returned mail: see transcript for details',
    text: 'The original message was received at Sun, 29 Nov 2026 09:00:00 GMT\r\n\r\n   ----- The following addresses had permanent fatal errors -----',
    head: ['Reporting-MTA: dns; mx.dest.test', 'Received-From-MTA: DNS; mta.svc.test', `Arrival-Date: ${DATE}`],
    block: (b) => [
      b.original ? `Original-Recipient: rfc822;${b.original}` : null,
      `Final-Recipient: RFC822; ${b.final}`,
      `Action: ${b.action}`,
      `Status: ${b.status}`,
      'Remote-MTA: DNS; mailbox.dest.test',
      `Diagnostic-Code: SMTP; ${b.diagnostic}`,
      `Last-Attempt-Date: ${DATE}`,
    ],
  },
  exim: {
    from: 'Mail Delivery System <Mailer-Daemon@mx.dest.test>',
    subject: 'Mail delivery failed: returning message to sender',
    text: 'This message was created automatically by mail delivery software.',
    head: ['Reporting-MTA: dns; mx.dest.test'],
    block: (b) => [
      `Action: ${b.action}`,
      `Final-Recipient: rfc822;<${b.final}>`,
      b.original ? `Original-Recipient: rfc822;${b.original}` : null,
      `Status: ${b.status}`,
      'Remote-MTA: dns; mailbox.dest.test',
      `Diagnostic-Code: smtp; ${b.diagnostic}`,
    ],
  },
};

function qmailText(to: string, blocks: Block[]): string {
  return [
    'From: MAILER-DAEMON@mx.dest.test',
    `To: ${to}`,
    'Subject: failure notice',
    `Date: ${DATE}`,
    '',
    'Hi. This is the qmail-send program at mx.dest.test.',
    "I'm afraid I wasn't able to deliver your message to the following addresses.",
    "This is a permanent error; I've given up. Sorry it didn't work out.",
    '',
    ...blocks.flatMap((b) => [
      `<${b.final}>:`,
      `127.0.0.1 does not like recipient.`,
      `Remote host said: ${b.diagnostic}`,
      'Giving up on 127.0.0.1.',
      '',
    ]),
    '--- Below this line is a copy of the message.',
    '',
    quoted(to),
  ].join('\r\n');
}

function eximText(to: string, blocks: Block[]): string {
  return [
    'From: Mail Delivery System <Mailer-Daemon@mx.dest.test>',
    `To: ${to}`,
    'Subject: Mail delivery failed: returning message to sender',
    `Date: ${DATE}`,
    'Auto-Submitted: auto-replied',
    '',
    'This message was created automatically by mail delivery software.',
    '',
    'A message that you sent could not be delivered to one or more of its',
    'recipients. This is a permanent error. The following address(es) failed:',
    '',
    ...blocks.flatMap((b) => [
      `  ${b.final}`,
      '    host mailbox.dest.test [127.0.0.1]',
      `    SMTP error from remote mail server after RCPT TO:<${b.final}>:`,
      `    ${b.diagnostic}`,
    ]),
    '',
    '------ This is a copy of the message, including all the headers. ------',
    '',
    quoted(to),
  ].join('\r\n');
}

/** A complaint as a mailbox provider's feedback loop sends it (RFC 5965), naming `rcpt`. */
function arfText(to: string, rcpt: string): string {
  return [
    'From: feedback@dest.test',
    `To: ${to}`,
    'Subject: Abuse report',
    `Date: ${DATE}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="=_arf"',
    '',
    '--=_arf',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report.',
    '',
    '--=_arf',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: dest-fbl/1.0',
    'Version: 1',
    `Original-Mail-From: <${to}>`,
    `Original-Rcpt-To: <${rcpt}>`,
    `Arrival-Date: ${DATE}`,
    '',
    '--=_arf',
    'Content-Type: text/rfc822-headers',
    '',
    [`Return-Path: <${to}>`, 'From: news@sender.test', `To: ${rcpt}`, 'Subject: Hello', ''].join('\r\n'),
    '--=_arf--',
    '',
  ].join('\r\n');
}

/**
 * One transaction per destination: one return path per (email, destination), its tag made for
 * the destination, so the report alone says which recipient. A failed block (a complaint) marks
 * the recipient at that destination that its Final- or Original-Recipient (Original-Rcpt-To, To)
 * names; an address it cannot tie to one marks nobody. `tagValid`: false for an outsider's
 * made-up tag, which the HMAC refuses as in svc.
 */
export function perDestination(report: InboundReport, recipientsAtDestination: string[], tagValid: boolean): string[] {
  if (!tagValid) return [];
  const mine = new Set(recipientsAtDestination.map((a) => a.toLowerCase()));
  const pick = (names: (string | null)[]) =>
    names.flatMap((a) => (a ? [a.toLowerCase(), xtextDecoded(a.toLowerCase())] : [])).find((a) => mine.has(a));
  const marked = new Set<string>();
  if (report.kind === 'dsn') {
    for (const r of report.recipients) {
      if (r.action !== 'failed') continue;
      const hit = pick([r.address, r.original]);
      if (hit) marked.add(hit);
    }
  } else if (report.kind === 'arf') {
    const to = /^to:[ \t]*(.*)$/im.exec(report.originalHeaders)?.[1]?.trim() ?? null;
    const hit = pick([report.originalRcptTo, to]);
    if (hit) marked.add(hit);
  }
  return [...marked];
}

/** How a scheme did on one case: the recipients its reports marked against the truth. */
export interface Outcome {
  case: Case;
  marked: string[];
}

export interface Figures {
  /** Genuine: recipients that should be marked, marked, missed, and marked wrongly. */
  due: number;
  right: number;
  missed: number;
  wrong: number;
  /** Forged: reports, and those that marked someone other than their forger. */
  forged: number;
  harmful: number;
  /** Ambiguous: cases that marked their recipient. */
  ambiguousMarked: number;
}

/** The figures of a scheme over the corpus (addresses as `addressIn` made them). */
export function figuresOf(outcomes: Outcome[]): Figures {
  const f: Figures = { due: 0, right: 0, missed: 0, wrong: 0, forged: 0, harmful: 0, ambiguousMarked: 0 };
  for (const { case: c, marked } of outcomes) {
    const truth = new Set(c.truth.map((a) => addressIn(c, a)));
    if (c.kind === 'genuine') {
      f.due += truth.size;
      f.right += marked.filter((a) => truth.has(a)).length;
      f.missed += [...truth].filter((a) => !marked.includes(a)).length;
      f.wrong += marked.filter((a) => !truth.has(a)).length;
    } else if (c.kind === 'forged') {
      f.forged++;
      const self = c.forger && 'recipient' in c.forger ? addressIn(c, c.forger.recipient) : null;
      if (marked.some((a) => a !== self)) f.harmful++;
    } else if (marked.length) f.ambiguousMarked++;
  }
  return f;
}
