import { beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryEnv } from './delivery-helpers.ts';
import { bounceSuite, dsn } from './inbound-helpers.ts';

// Bounces that come back after the 250 (issue 15): DSNs mailed to an email's return
// path, through the inbound MX listener, on real sockets. ARF complaints, forged mail and
// `svc inbound process`: test/inbound-reports.test.ts.

const suite = bounceSuite();
const { delivered, mail, suppressed } = suite;
let d: DeliveryEnv;
beforeAll(() => ({ d } = suite.env()));

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
