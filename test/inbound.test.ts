import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeliveryStatus } from '../src/inbound/index.ts';
import type { MxPeer } from './peers/mx.ts';
import { smtpTalk } from './peers/smtp-talk.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { count } from './harness.ts';
import { runSvc } from './cli-runner.ts';
import { classifyReply, describeRule } from '../src/delivery/classify.ts';
import { mailNullSender, settle, startBounceEnv, type BounceEnv, type DeliveryEnv } from './delivery-helpers.ts';

// Bounces that come back after the 250 (issue 15): DSNs mailed to an email's return
// path, through the inbound MX listener, on real sockets.

let b: BounceEnv;
let mx: MxPeer;
let d: DeliveryEnv;
let port: number;

beforeAll(async () => {
  b = await startBounceEnv(['dest.test', 'other.test']);
  ({ mx, d, port } = b);
});

afterAll(() => b.close());

/** Sends a LIVE email, delivers it, and returns its id and the return path each destination saw. */
async function delivered(to: string[]): Promise<{ id: string; returnPath: (domain: string) => string }> {
  const before = mx.received.length;
  const id = await d.send(to);
  await settle(d.env);
  expect((await d.email(id)).status).toBe('DELIVERED');
  const got = mx.received.slice(before);
  return {
    id,
    returnPath: (domain) => got.find((m) => m.to.some((a) => a.endsWith(`@${domain}`)))!.from,
  };
}

/** A DSN as Postfix writes one (RFC 3464), for the recipients given. */
function dsn(to: string, recipients: { address: string; action?: string; status: string; diagnostic: string }[]) {
  const blocks = recipients
    .map((r) =>
      [
        `Final-Recipient: rfc822; ${r.address}`,
        `Original-Recipient: rfc822;${r.address}`,
        `Action: ${r.action ?? 'failed'}`,
        `Status: ${r.status}`,
        'Remote-MTA: dns; mailbox.dest.test',
        // Folded, as MTAs write long diagnostics.
        `Diagnostic-Code: smtp; ${r.diagnostic.replace(/ (\S+)$/, '\r\n    $1')}`,
      ].join('\r\n'),
    )
    .join('\r\n\r\n');
  return [
    'From: MAILER-DAEMON@mx.dest.test (Mail Delivery System)',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUNDARY"',
    '',
    '--BOUNDARY',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host mx.dest.test. Your message could not be delivered.',
    '',
    '--BOUNDARY',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.dest.test',
    'Arrival-Date: Sun, 15 Mar 2026 12:00:00 +0000',
    '',
    blocks,
    '',
    '--BOUNDARY',
    'Content-Type: text/rfc822-headers',
    '',
    'From: news@sender.test',
    'Subject: Hello',
    '',
    '--BOUNDARY--',
    '',
  ].join('\r\n');
}

/** One message to `rcpt` with the null sender, as bounces come; resolves with the replies to RCPT and to the dot. */
const mail = (rcpt: string, body: string) => mailNullSender(port, rcpt, body);

const suppressed = (address: string) =>
  count(d.env, 'suppressions', 'project_id = ? AND email = ?', d.env.init.project_id, address);

describe('DSNs to a return path', () => {
  it('turns a delivered recipient BOUNCED, hard, suppressed, with a bounced event from the DSN', async () => {
    const { id, returnPath } = await delivered(['gone@dest.test']);
    const rp = returnPath('dest.test');
    const r = await mail(
      rp,
      dsn(rp, [
        {
          address: 'gone@dest.test',
          status: '5.1.1',
          diagnostic: '550 5.1.1 <gone@dest.test>: Recipient address rejected: User unknown in virtual mailbox table',
        },
      ]),
    );
    expect(r.data).toMatch(/^250 /);
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
    });
    expect((await d.recipients(id))[0]).toMatchObject({ status: 'BOUNCED', smtp_code: 550, smtp_enhanced: '5.1.1' });
    const events = await d.events(id);
    expect(events.map((e) => e.type)).toEqual(['queued', 'sending', 'smtp_connected', 'sent', 'delivered', 'bounced']);
    expect(events.at(-1)).toMatchObject({
      recipient: 'gone@dest.test',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
      source: 'dsn',
    });
    expect(events[4]).not.toHaveProperty('source');
    expect(await suppressed('gone@dest.test')).toBe(1);
    const metrics = (await d.env.server.inject({ url: '/metrics' })).body;
    expect(metrics).toContain(
      'svc_recipient_outcomes_total{outcome="bounced",category="invalid-recipient",type="hard",source="dsn"} 1',
    );
    // The same DSN again changes nothing.
    await mail(rp, dsn(rp, [{ address: 'gone@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' }]));
    expect((await d.events(id)).filter((e) => e.type === 'bounced')).toHaveLength(1);
  });

  it('reads Gmail’s DSN: nested HTML, a Diagnostic-Code folded over three reply lines', async () => {
    const { id, returnPath } = await delivered(['nouser@dest.test']);
    const rp = returnPath('dest.test');
    const body = [
      'From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>',
      `To: ${rp}`,
      'Subject: Delivery Status Notification (Failure)',
      'Auto-Submitted: auto-replied',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; boundary="000000000000a1b2c3"; report-type=delivery-status',
      '',
      '--000000000000a1b2c3',
      'Content-Type: multipart/related; boundary="000000000000d4e5f6"',
      '',
      '--000000000000d4e5f6',
      'Content-Type: multipart/alternative; boundary="000000000000g7h8"',
      '',
      '--000000000000g7h8',
      'Content-Type: text/plain; charset="UTF-8"',
      '',
      '** Address not found **',
      '',
      "Your message wasn't delivered to nouser@dest.test because the address couldn't be found.",
      '',
      '--000000000000g7h8',
      'Content-Type: text/html; charset="UTF-8"',
      '',
      '<html><body><h2>Address not found</h2></body></html>',
      '--000000000000g7h8--',
      '--000000000000d4e5f6--',
      '--000000000000a1b2c3',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; googlemail.com',
      'Received-From-MTA: dns; mta.svc.test',
      'Arrival-Date: Sun, 15 Mar 2026 05:00:00 -0700 (PDT)',
      '',
      'Final-Recipient: rfc822; nouser@dest.test',
      'Action: failed',
      'Status: 5.1.1',
      'Remote-MTA: dns; mx.dest.test. (127.0.0.1, the server for the domain dest.test.)',
      'Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist. Please try',
      " 550-5.1.1 double-checking the recipient's email address for typos or",
      ' 550 5.1.1 unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser',
      'Last-Attempt-Date: Sun, 15 Mar 2026 05:00:01 -0700 (PDT)',
      '',
      '--000000000000a1b2c3',
      'Content-Type: message/rfc822',
      '',
      'From: news@sender.test',
      'Subject: Hello',
      '',
      'Hi there',
      '--000000000000a1b2c3--',
      '',
    ].join('\r\n');
    await mail(rp, body);
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
    });
  });

  it('reads Microsoft 365’s DSN (5.1.10, RecipientNotFound)', async () => {
    const { id, returnPath } = await delivered(['absent@dest.test']);
    const rp = returnPath('dest.test');
    const body = [
      'From: postmaster@dest.onmicrosoft.test',
      `To: ${rp}`,
      'Subject: Undeliverable: Hello',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1_ms"',
      '',
      '--b1_ms',
      'Content-Type: text/html; charset="us-ascii"',
      '',
      "<p>Your message to absent@dest.test couldn't be delivered.</p>",
      '--b1_ms',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns;AM0PR01MB1234.eurprd01.prod.exchangelabs.test',
      'Received-From-MTA: dns;mta.svc.test',
      '',
      'Original-Recipient: rfc822;absent@dest.test',
      'Final-Recipient: rfc822;absent@dest.test',
      'Action: failed',
      'Status: 5.1.10',
      'Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
      '',
      '--b1_ms',
      'Content-Type: text/rfc822-headers',
      '',
      'From: news@sender.test',
      'Subject: Hello',
      '',
      '--b1_ms--',
      '',
    ].join('\r\n');
    await mail(rp, body);
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
    });
    expect(await suppressed('absent@dest.test')).toBe(1);
  });

  it('records a full mailbox the remote server gave up on as a soft bounce, not suppressed', async () => {
    const { id, returnPath } = await delivered(['full@dest.test']);
    const rp = returnPath('dest.test');
    await mail(rp, dsn(rp, [{ address: 'full@dest.test', status: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' }]));
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'soft',
      bounce_category: 'mailbox-full',
    });
    expect(await suppressed('full@dest.test')).toBe(0);
  });

  it('never suppresses for a block of our IP reported later', async () => {
    const { id, returnPath } = await delivered(['ip@dest.test']);
    const rp = returnPath('dest.test');
    const diagnostic = '554 5.7.1 Service unavailable; Client host [1.2.3.4] blocked using zen.spamhaus.org';
    await mail(rp, dsn(rp, [{ address: 'ip@dest.test', status: '5.7.1', diagnostic }]));
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'soft',
      bounce_category: 'reputation-blocklist',
    });
    expect(await suppressed('ip@dest.test')).toBe(0);
  });

  it('ignores a delayed notice and an auto-reply', async () => {
    const { id, returnPath } = await delivered(['slow@dest.test']);
    const rp = returnPath('dest.test');
    const delayed = await mail(
      rp,
      dsn(rp, [{ address: 'slow@dest.test', action: 'delayed', status: '4.4.1', diagnostic: '421 4.4.1 timeout' }]),
    );
    expect(delayed.data).toMatch(/^250 /);
    const vacation = await mail(
      rp,
      `From: slow@dest.test\r\nTo: ${rp}\r\nSubject: Out of Office: Hello\r\nAuto-Submitted: auto-replied\r\n\r\nI am away until Monday.\r\n`,
    );
    expect(vacation.data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('DELIVERED');
  });
});

/** An ARF report (RFC 5965) as feedback loops send them, about a message to `rcpt`. */
function arf(to: string, rcpt: string, opts: { originalRcptTo?: boolean; returnPath?: string } = {}) {
  return [
    'From: feedback@fbl.dest.test',
    `To: ${to}`,
    'Subject: FW: Hello',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report for an email message received from IP 1.2.3.4.',
    '',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: SomeFBL/1.0',
    'Version: 1',
    ...(opts.originalRcptTo === false ? [] : [`Original-Rcpt-To: <${rcpt}>`]),
    'Source-IP: 1.2.3.4',
    '',
    '--ARF',
    'Content-Type: text/rfc822-headers',
    '',
    `Return-Path: <${opts.returnPath ?? to}>`,
    'From: news@sender.test',
    `To: ${rcpt}`,
    'Subject: Hello',
    '',
    '--ARF--',
    '',
  ].join('\r\n');
}

const suppressionReason = async (address: string) =>
  (
    await d.env.query<{ reason: string }>(
      'SELECT reason FROM suppressions WHERE project_id = ? AND email = ?',
      d.env.init.project_id,
      address,
    )
  )[0]?.reason;

describe('plain-text bounces', () => {
  it('reads a qmail bounce', async () => {
    const { id, returnPath } = await delivered(['q@dest.test']);
    const rp = returnPath('dest.test');
    const body = [
      'From: MAILER-DAEMON@mx.dest.test',
      `To: ${rp}`,
      'Subject: failure notice',
      '',
      'Hi. This is the qmail-send program at mx.dest.test.',
      "I'm afraid I wasn't able to deliver your message to the following addresses.",
      "This is a permanent error; I've given up. Sorry it didn't work out.",
      '',
      '<q@dest.test>:',
      'Sorry, no mailbox here by that name. (#5.1.1)',
      '',
      '--- Below this line is a copy of the message.',
      '',
      'From: news@sender.test',
    ].join('\r\n');
    await mail(rp, body);
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
    });
  });

  it('reads an Exim bounce, and ignores its delay warning', async () => {
    const { id, returnPath } = await delivered(['x@dest.test']);
    const rp = returnPath('dest.test');
    const warning = [
      'From: Mail Delivery System <Mailer-Daemon@mx.dest.test>',
      `To: ${rp}`,
      'Subject: Warning: message 1abc-000 delayed 24 hours',
      '',
      'This message was created automatically by mail delivery software.',
      'A message that you sent has not yet been delivered to one or more of its recipients.',
      'No action is required on your part. Delivery attempts will continue for some time.',
      '',
      '  x@dest.test',
      '    Delay reason: SMTP error from remote mail server after RCPT TO:<x@dest.test>:',
      '    451 4.7.1 Greylisted',
    ].join('\r\n');
    await mail(rp, warning);
    expect((await d.email(id)).status).toBe('DELIVERED');
    const bounce = [
      'From: Mail Delivery System <Mailer-Daemon@mx.dest.test>',
      `To: ${rp}`,
      'Subject: Mail delivery failed: returning message to sender',
      '',
      'This message was created automatically by mail delivery software.',
      '',
      'A message that you sent could not be delivered to one or more of its',
      'recipients. This is a permanent error. The following address(es) failed:',
      '',
      '  x@dest.test',
      '    host mailbox.dest.test [192.0.2.1]',
      '    SMTP error from remote mail server after RCPT TO:<x@dest.test>:',
      '    552 5.2.2 <x@dest.test>: Mailbox quota exceeded',
      '',
      '------ This is a copy of the message, including all the headers. ------',
    ].join('\r\n');
    await mail(rp, bounce);
    expect(await d.email(id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'soft',
      bounce_category: 'mailbox-full',
    });
  });

  it('reads Exchange’s text NDR and Gmail’s text bounce', async () => {
    const ex = await delivered(['ex@dest.test']);
    const exRp = ex.returnPath('dest.test');
    const exchange = [
      'From: postmaster@dest.test',
      `To: ${exRp}`,
      'Subject: Undeliverable: Hello',
      '',
      'Delivery has failed to these recipients or groups:',
      '',
      'ex@dest.test',
      "The email address you entered couldn't be found. Please check the recipient's email address and try to resend the message.",
      '',
      'Diagnostic information for administrators:',
      '',
      'Generating server: MAIL01.dest.test',
      '',
      'ex@dest.test',
      "Remote Server returned '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found'",
      '',
      'Original message headers:',
    ].join('\r\n');
    await mail(exRp, exchange);
    expect(await d.email(ex.id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'hard',
      bounce_category: 'invalid-recipient',
    });

    const gm = await delivered(['gm@dest.test']);
    const gmRp = gm.returnPath('dest.test');
    const gmail = [
      'From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>',
      `To: ${gmRp}`,
      'Subject: Delivery Status Notification (Failure)',
      '',
      '** Message not delivered **',
      '',
      "Your message wasn't delivered to gm@dest.test because the domain's mail server refused it.",
      '',
      'The response from the remote server was:',
      '550 5.7.1 Message rejected as spam by Content Filtering',
    ].join('\r\n');
    await mail(gmRp, gmail);
    expect(await d.email(gm.id)).toMatchObject({
      status: 'BOUNCED',
      bounce_type: 'soft',
      bounce_category: 'content-spam-block',
    });
    expect(await suppressed('gm@dest.test')).toBe(0);
  });

  it('refuses a report bomb of thousands of parts without parsing it', async () => {
    const { id, returnPath } = await delivered(['bomb@dest.test']);
    const rp = returnPath('dest.test');
    const parts = Array.from({ length: 5000 }, () => '--B\r\nContent-Type: text/plain\r\n\r\nx').join('\r\n');
    const body = `To: ${rp}\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n${parts}\r\n--B--\r\n`;
    expect((await mail(rp, body)).data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('DELIVERED');
  });
});

describe('ARF complaints', () => {
  it('turns a delivered recipient COMPLAINED, with a complained event and a COMPLAINT suppression', async () => {
    const { id, returnPath } = await delivered(['angry@dest.test']);
    const rp = returnPath('dest.test');
    expect((await mail(rp, arf(rp, 'angry@dest.test'))).data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('COMPLAINED');
    expect((await d.recipients(id))[0]!.status).toBe('COMPLAINED');
    expect((await d.events(id)).at(-1)).toEqual({
      type: 'complained',
      recipient: 'angry@dest.test',
      feedback_type: 'abuse',
      source: 'arf',
    });
    expect(await suppressionReason('angry@dest.test')).toBe('COMPLAINT');
  });

  it('finds the recipient in the reported headers when the report has no Original-Rcpt-To', async () => {
    const { id, returnPath } = await delivered(['quiet@dest.test']);
    const rp = returnPath('dest.test');
    await mail(rp, arf(rp, 'quiet@dest.test', { originalRcptTo: false }));
    expect((await d.email(id)).status).toBe('COMPLAINED');
  });

  it('does not take a complaint about a recipient at another domain than its return path', async () => {
    const { id, returnPath } = await delivered(['cat@dest.test', 'dog@other.test']);
    const rp = returnPath('dest.test');
    await mail(rp, arf(rp, 'dog@other.test'));
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressionReason('dog@other.test')).toBeUndefined();
  });
});

describe('forged and stray mail', () => {
  it('does not let one destination’s return path bounce a recipient at another domain', async () => {
    const { id, returnPath } = await delivered(['ann@dest.test', 'bob@other.test']);
    const rp = returnPath('dest.test');
    const r = await mail(
      rp,
      dsn(rp, [{ address: 'bob@other.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]),
    );
    expect(r.data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressed('bob@other.test')).toBe(0);
  });

  it('does not let one recipient’s return path bounce a co-recipient at the same domain', async () => {
    const { id } = await delivered(['ann2@dest.test', 'cat2@dest.test']);
    const annRp = mx.received.find((m) => m.to.includes('ann2@dest.test'))!.from;
    await mail(annRp, dsn(annRp, [{ address: 'cat2@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]));
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressed('cat2@dest.test')).toBe(0);
    // Its own recipient, it does bounce.
    await mail(annRp, dsn(annRp, [{ address: 'ann2@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]));
    expect((await d.recipients(id)).map((r) => r.status)).toEqual(['BOUNCED', 'DELIVERED']);
  });

  it('does not apply a DSN to a return path whose tag is wrong', async () => {
    const { id, returnPath } = await delivered(['tag@dest.test']);
    const rp = returnPath('dest.test');
    const forged = rp.replace(
      /-([0-9a-f])([0-9a-f]{11})@/,
      (_m, a: string, rest: string) => `-${a === '0' ? '1' : '0'}${rest}@`,
    );
    expect(forged).not.toBe(rp);
    await mail(forged, dsn(forged, [{ address: 'tag@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]));
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressed('tag@dest.test')).toBe(0);
  });

  it('refuses any address that is not a return path of an email it sent: 550 5.1.1', async () => {
    for (const rcpt of [
      'postmaster@sender.test',
      'someone@elsewhere.example',
      'bounces+00000000000070008000000000000001-0123456789ab@bounces.sender.test',
    ]) {
      expect((await mail(rcpt, 'Subject: x\r\n\r\nx\r\n')).rcpt).toMatch(/^550 5\.1\.1 /);
    }
  });

  // The listener's SIZE is a received message's 25 MiB (issue 34); a bounce is held to 10 MiB after DATA.
  it('refuses a message over 25 MiB at MAIL when declared, and a bounce over 10 MiB after DATA', async () => {
    const { returnPath } = await delivered(['big@dest.test']);
    const rp = returnPath('dest.test');
    const s = await smtpTalk(port);
    try {
      await s.reply();
      await s.send('EHLO mx.dest.test');
      expect(await s.send(`MAIL FROM:<> SIZE=${26 * 1024 * 1024}`)).toMatch(/^552 5\.3\.4 /);
      await s.send('MAIL FROM:<>');
      await s.send(`RCPT TO:<${rp}>`);
      await s.send('DATA');
      s.write(`Subject: big\r\n\r\n${`${'x'.repeat(998)}\r\n`.repeat(11 * 1050)}.\r\n`);
      expect(await s.reply()).toMatch(/^552 5\.3\.4 /);
    } finally {
      s.close();
    }
  });

  it('takes malformed MIME without a crash and without a change', async () => {
    const { id, returnPath } = await delivered(['odd@dest.test']);
    const rp = returnPath('dest.test');
    const body = `To: ${rp}\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="X"\r\n\r\n--X\r\nContent-Type: message/delivery-status\r\n\r\nFinal-Recipient: garbage\r\nAction:\r\n--X`;
    expect((await mail(rp, body)).data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('DELIVERED');
  });
});

describe('one classifier for synchronous replies and DSNs (issue 29, item 5)', () => {
  // A reply about our sender (Exim's sender callout) with a code that otherwise means a dead recipient.
  const about =
    'Called: 192.0.2.1 Sent: RCPT TO:<bounces@sender.test> Response: 550 User unknown in local recipient table';

  it('bounces a DSN about our sender soft by the sender rule, as the same reply in the transaction, and shows the rule', async () => {
    mx.behaviour.set('callout-sync@dest.test', { rcpt: [550, `5.1.1 ${about}`] });
    const sync = await d.send(['callout-sync@dest.test']);
    await settle(d.env);
    const { id, returnPath } = await delivered(['callout-dsn@dest.test']);
    const rp = returnPath('dest.test');
    const diagnostic = `550 5.1.1 ${about}`;
    const r = await mail(rp, dsn(rp, [{ address: 'callout-dsn@dest.test', status: '5.1.1', diagnostic }]));
    expect(r.data).toMatch(/^250 /);

    const c = classifyReply({ code: 550, enhanced: '5.1.1', text: diagnostic }, { senders: [rp, 'news@sender.test'] });
    expect(c.rule.by).toBe('sender');
    const line = describeRule(c.rule);
    for (const email of [sync, id]) {
      expect(await d.email(email)).toMatchObject({
        status: 'BOUNCED',
        bounce_type: 'soft',
        bounce_category: 'policy-rejection',
        bounce_rule: line,
      });
      expect((await d.recipients(email))[0]).toMatchObject({ status: 'BOUNCED', bounce_rule: line });
    }
    expect((await d.events(id)).at(-1)).toMatchObject({ type: 'bounced', source: 'dsn', bounce_rule: line });
    expect(await suppressed('callout-sync@dest.test')).toBe(0);
    expect(await suppressed('callout-dsn@dest.test')).toBe(0);
    const shown = await runSvc(d.env.dir, ['emails', 'show', id], d.env.cliEnv);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/callout-dsn@dest\.test: BOUNCED.*; bounced \(from dsn\) at .*\n {4}rule: /);
    expect(shown.stdout).toContain(`\n    rule: ${line}\n`);
  });
});

describe('svc inbound process', () => {
  it('applies a saved bounce found by its return path, and says what it did', async () => {
    const { id, returnPath } = await delivered(['saved@dest.test']);
    const rp = returnPath('dest.test');
    const file = join(d.env.dir, 'bounce.eml');
    writeFileSync(
      file,
      dsn(rp, [{ address: 'saved@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 No such user' }]),
    );
    const run = await runSvc(d.env.dir, ['inbound', 'process', file, '--json'], d.env.cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({
      kind: 'dsn',
      applied: [
        {
          email_id: id,
          recipient: 'saved@dest.test',
          status: 'BOUNCED',
          bounce_type: 'hard',
          bounce_category: 'invalid-recipient',
        },
      ],
      ignored: [],
    });
    expect((await d.email(id)).status).toBe('BOUNCED');
    // svc emails show says where each recipient's outcome came from.
    const shown = await runSvc(d.env.dir, ['emails', 'show', id, '--json'], d.env.cliEnv);
    expect(shown.json().delivery[0].outcome).toMatchObject({ type: 'bounced', source: 'dsn' });
    const text = await runSvc(d.env.dir, ['emails', 'show', id], d.env.cliEnv);
    expect(text.stdout).toMatch(/saved@dest\.test: BOUNCED.*; bounced \(from dsn\) at /);
  });

  it('says clearly when a file is missing or names no return path: exit 1', async () => {
    const missing = await runSvc(d.env.dir, ['inbound', 'process', join(d.env.dir, 'nope.eml')], {
      SVC_DATA_DIR: d.env.dir,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*nope\.eml/);
    const file = join(d.env.dir, 'plain.eml');
    writeFileSync(file, 'Subject: hi\r\n\r\nhello\r\n');
    const none = await runSvc(d.env.dir, ['inbound', 'process', file], d.env.cliEnv);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no return path of svc in .*--to/);
  });
});

describe('parseDeliveryStatus', () => {
  it('reads every recipient block, folded fields and CRLF, and skips the per-message block', () => {
    const body = [
      'Reporting-MTA: dns; mx.example',
      '',
      'Final-Recipient: rfc822; a@example.com',
      'Action: failed',
      'Status: 5.1.1 (user unknown)',
      'Diagnostic-Code: smtp; 550 5.1.1 <a@example.com>:',
      '    Recipient address rejected',
      '',
      'Original-Recipient: rfc822; <b@example.com>',
      'Action: Delayed',
      'Status: 4.4.7',
    ].join('\r\n');
    expect(parseDeliveryStatus(body)).toEqual([
      {
        address: 'a@example.com',
        original: null,
        action: 'failed',
        status: '5.1.1',
        diagnostic: { code: 550, text: '550 5.1.1 <a@example.com>: Recipient address rejected' },
        remoteMta: null,
      },
      {
        address: 'b@example.com',
        original: 'b@example.com',
        action: 'delayed',
        status: '4.4.7',
        diagnostic: null,
        remoteMta: null,
      },
    ]);
  });
});
