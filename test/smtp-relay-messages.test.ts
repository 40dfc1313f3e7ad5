import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { count, verifyDomain } from './harness.ts';
import { startDnsServer } from './peers/dns.ts';
import { startMxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, verifyDkim } from './delivery-helpers.ts';
import { data, idOf, relaySuite, simple, transport } from './relay-helpers.ts';

// The SMTP relay (issue 8): the messages it takes and what it makes of them, and LIVE sends
// delivered and signed. Sessions, STARTTLS and limits: test/smtp-relay.test.ts.

const { cleanups, startRelay, testEnv, useEnv, emailRow, authed } = relaySuite();

describe('messages', () => {
  it('stores what the client sent: addresses, non-ASCII text, HTML, attachments, headers, Message-ID, tags', async () => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e);
    const pdf = randomBytes(50_000);
    const info = await transport(port, key).sendMail({
      from: { name: 'Zoë Ünïcode', address: 'news@example.com' },
      to: ['a@example.net', 'B <b@example.net>'],
      cc: 'c@example.net',
      bcc: 'hidden@example.net',
      replyTo: 'support@example.com',
      subject: 'Grüße aus 東京 ✓',
      text: 'Hallo Wörld\n東京 ✓',
      html: '<p>Grüße <b>東京</b></p><img src="cid:logo@shop.example">',
      messageId: '<order-42@shop.example>',
      headers: {
        'X-Campaign': 'winter',
        'List-Unsubscribe': '<https://example.com/u>',
        'X-Service-Tags': 'orders, winter',
        'X-Service-Internal': 'dropped',
      },
      attachments: [
        { filename: 'résumé 東京.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'data.csv', content: 'a,b\n1,2\n', contentType: 'text/csv' },
        { filename: 'logo.png', content: pdf.subarray(0, 100), contentType: 'image/png', cid: 'logo@shop.example' },
      ],
    });
    expect(info.response).toMatch(/^250 2\.6\.0 Ok: queued as [0-9a-f-]{36}$/);
    expect(info.accepted).toHaveLength(4);
    const id = idOf(info.response);
    const got = await e.app.emails.get(e.init.project_id, id);
    expect(got).toMatchObject({
      status: 'SIMULATED',
      source: 'SMTP',
      from_email: 'news@example.com',
      from_name: 'Zoë Ünïcode',
      to_emails: ['a@example.net', 'b@example.net'],
      cc_emails: ['c@example.net'],
      bcc_emails: ['hidden@example.net'],
      reply_to: ['support@example.com'],
      subject: 'Grüße aus 東京 ✓',
      text_body: 'Hallo Wörld\n東京 ✓',
      html_body: '<p>Grüße <b>東京</b></p><img src="cid:logo@shop.example">',
      message_id: 'order-42@shop.example',
      tags: ['orders', 'winter'],
    });
    expect(got.headers).toEqual({ 'X-Campaign': 'winter', 'List-Unsubscribe': '<https://example.com/u>' });
    // The message is stored as written (issue 33): its attachments are read from it, not kept as rows.
    expect(await count(e, 'attachments')).toBe(0);
    const files = await e.app.emails.attachments(e.init.project_id, id);
    // In the order of the message's parts: nodemailer puts the inline image beside the HTML first.
    expect(files.map((f) => [f.filename, f.content_type, f.content_id, f.size])).toEqual([
      ['logo.png', 'image/png', 'logo@shop.example', 100],
      ['résumé 東京.pdf', 'application/pdf', null, 50_000],
      ['data.csv', 'text/csv', null, 8],
    ]);
    const content = (i: number) => e.app.emails.attachment(e.init.project_id, id, i).then((a) => a.content);
    expect((await content(0)).equals(pdf.subarray(0, 100))).toBe(true);
    expect((await content(1)).equals(pdf)).toBe(true);
    expect((await content(2)).toString()).toBe('a,b\n1,2\n');
  });

  it('makes envelope-only recipients bcc, and does not send to header addresses outside the envelope', async () => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e);
    const info = await transport(port, key).sendMail({
      envelope: { from: 'bounces@example.com', to: ['a@example.net', 'secret@example.org'] },
      from: 'news@example.com',
      to: ['a@example.net', 'not-in-envelope@example.net'],
      subject: 'Envelope',
      text: 'x',
    });
    const got = await e.app.emails.get(e.init.project_id, idOf(info.response));
    expect(got).toMatchObject({
      from_email: 'news@example.com',
      to_emails: ['a@example.net'],
      cc_emails: null,
      bcc_emails: ['secret@example.org'],
    });
  });

  it('keeps an HTML-only message HTML-only, and takes 8-bit UTF-8 headers under SMTPUTF8', async () => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e);
    const s = await authed(port, key);
    expect(await s.send('MAIL FROM:<news@example.com> SMTPUTF8 BODY=8BITMIME')).toMatch(/^250 /);
    await s.send('RCPT TO:<a@example.net>');
    await s.send('DATA');
    s.write(
      [
        'From: Ünï <news@example.com>',
        'To: Jürgen <a@example.net>',
        'Subject: Grüße',
        'MIME-Version: 1.0',
        'Content-Type: text/html; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        '<p>Grüße</p>',
        '.',
        '',
      ].join('\r\n'),
    );
    const r = await s.reply();
    expect(r).toMatch(/^250 /);
    const got = await e.app.emails.get(e.init.project_id, idOf(r));
    expect(got).toMatchObject({ from_name: 'Ünï', to_emails: ['a@example.net'], subject: 'Grüße' });
    // The line break before the final dot ends the body's last line: it is part of the body.
    expect(got.html_body).toBe('<p>Grüße</p>\n');
    expect(got.text_body).toBeNull();
  });

  it('answers a message with no envelope recipient in To with 554 5.6.0 and a clear text', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    const r = await data(s, 'news@example.com', ['b@example.net'], simple('a@example.net'));
    expect(r).toMatch(/^554 5\.6\.0 The To header names none of the envelope recipients/);
    expect(await count(e, 'emails')).toBe(0);
  });

  it('answers a message that fails the API request rules with 554 5.6.0 naming the field', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    const r = await data(s, 'news@example.com', ['a@example.net'], simple('a@example.net', 'x'.repeat(1000)));
    expect(r).toMatch(/^554 5\.6\.0 The request failed validation: subject: /);
    expect(await count(e, 'emails')).toBe(0);
  });

  it('leaves nothing when the client disconnects in the middle of DATA', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    await s.send('MAIL FROM:<news@example.com>');
    await s.send('RCPT TO:<a@example.net>');
    expect(await s.send('DATA')).toMatch(/^354 /);
    s.write('From: news@example.com\r\nTo: a@example.net\r\nSubject: cut\r\n\r\nhalf a mess');
    s.close();
    await s.closed;
    // A new session's complete message is the only one stored.
    const t = await authed(port, await e.key());
    expect(await data(t, 'news@example.com', ['a@example.net'], simple())).toMatch(/^250 /);
    expect(await count(e, 'emails')).toBe(1);
    expect((await e.query<{ subject: string }>('SELECT subject FROM emails'))[0]!.subject).toBe('Hi');
  });
});
describe('LIVE sends', () => {
  async function liveEnv(plan: 'FREE' | 'UNLIMITED' = 'UNLIMITED') {
    const e = await testEnv(plan);
    await verifyDomain(e, 'example.com');
    return { e, key: await e.key({ env: 'LIVE' }), port: await startRelay(e) };
  }

  it('queues a LIVE message from a verified domain', async () => {
    const { e, key, port } = await liveEnv();
    const s = await authed(port, key);
    const r = await data(s, 'news@example.com', ['a@example.net'], simple());
    expect(await emailRow(idOf(r))).toMatchObject({ status: 'QUEUED', source: 'SMTP', env: 'LIVE' });
    expect(await count(e, 'usage_counters')).toBeGreaterThan(0);
  });

  it('answers an unverified From domain with 550 5.7.1 naming it', async () => {
    const { e, key, port } = await liveEnv();
    const s = await authed(port, key);
    const r = await data(s, 'news@other.example', ['a@example.net'], simple().replace('example.com', 'other.example'));
    expect(r).toMatch(/^550 5\.7\.1 The domain other\.example is not verified for this project/);
    expect(await count(e, 'emails')).toBe(0);
  });

  it('refuses a suppressed recipient at RCPT with 550 5.1.1, and sends to the others', async () => {
    const { e, key, port } = await liveEnv();
    await e.query(
      "INSERT INTO suppressions (project_id, email, reason, created_at) VALUES (?, ?, 'HARD_BOUNCE', ?)",
      e.init.project_id,
      'gone@example.net',
      new Date(e.clock.now()).toISOString(),
    );
    const s = await authed(port, key);
    await s.send('MAIL FROM:<news@example.com>');
    expect(await s.send('RCPT TO:<Gone@example.net>')).toMatch(
      /^550 5\.1\.1 Gone@example\.net is on the suppression list \(HARD_BOUNCE\)/,
    );
    expect(await s.send('RCPT TO:<a@example.net>')).toMatch(/^250 /);
    expect(await s.send('DATA')).toMatch(/^354 /);
    s.write(`${simple('a@example.net, gone@example.net').replace(/\n/g, '\r\n')}\r\n.\r\n`);
    const r = await s.reply();
    expect(r).toMatch(/^250 /);
    const got = await e.app.emails.get(e.init.project_id, idOf(r));
    expect(got.to_emails).toEqual(['a@example.net']);
    // Every recipient suppressed: no recipient, no DATA.
    const t = await authed(port, key);
    await t.send('MAIL FROM:<news@example.com>');
    expect(await t.send('RCPT TO:<gone@example.net>')).toMatch(/^550 5\.1\.1 /);
    expect(await t.send('DATA')).toMatch(/^503 /);
  });

  it('answers an exhausted monthly volume with 452 4.5.3', async () => {
    const { e, key, port } = await liveEnv('FREE');
    const s = await authed(port, key);
    const to = Array.from({ length: 50 }, (_, i) => `r${i}@example.net`);
    // FREE: 100 recipients a month, and one message a second.
    for (let n = 0; n < 2; n++) {
      expect(await data(s, 'news@example.com', to, simple(to.join(', ')))).toMatch(/^250 /);
      e.clock.advance(1000);
    }
    expect(await data(s, 'news@example.com', ['a@example.net'], simple())).toMatch(/^452 4\.5\.3 /);
    expect(await count(e, 'emails')).toBe(2);
  });

  it('delivers a relayed LIVE message to the MX peer, DKIM-signed, with its Message-ID', async () => {
    const { port, mx, dns, ...d } = await deliveryRelay();
    const info = await transport(port, d.key).sendMail({
      from: 'News <news@sender.test>',
      to: 'a@dest.test',
      bcc: 'b@dest.test',
      subject: 'Relayed',
      text: 'Hello from SMTP',
      html: '<p>Hello <img src="cid:logo@app.example"></p>',
      attachments: [{ filename: 'logo.png', content: Buffer.from('png bytes'), cid: 'logo@app.example' }],
      messageId: '<relay-1@app.example>',
    });
    const id = idOf(info.response);
    await settle(d.env);
    expect(await d.email(id)).toMatchObject({ status: 'DELIVERED', source: 'SMTP' });
    // One transaction per recipient (each its own return path), the same message in each.
    expect(mx.received.map((m) => m.to[0]).sort()).toEqual(['a@dest.test', 'b@dest.test']);
    const got = mx.received[0]!;
    expect(await verifyDkim(got.raw, dns)).toMatchObject({ status: 'pass', domain: 'sender.test' });
    const parsed = await simpleParser(got.raw, { keepCidLinks: true });
    expect(parsed.messageId).toBe('<relay-1@app.example>');
    expect(parsed.text?.trim()).toBe('Hello from SMTP');
    // The inline image keeps its Content-ID, so the HTML's cid: link resolves (multipart/related).
    expect(got.raw.toString()).toMatch(/Content-Type: multipart\/related/);
    expect(parsed.attachments.map((a) => [a.cid, a.contentDisposition, a.content.toString()])).toEqual([
      ['logo@app.example', 'inline', 'png bytes'],
    ]);
    expect(parsed.html).toContain('cid:logo@app.example');
    expect(parsed.headers.get('bcc')).toBeUndefined();
  });

  it('tracks relayed mail only when the project asks (relay_tracking): off, the HTML arrives as written', async () => {
    const d = await deliveryRelay();
    await d.env.app.accounts.updateProjectSettings(d.env.init.project_id, { click_tracking: true });
    const html = '<p>Read  <a href="https://example.org/news">the news</a></p>';
    const sent = (subject: string) =>
      transport(d.port, d.key).sendMail({ from: 'news@sender.test', to: 'a@dest.test', subject, html });
    await sent('as written');
    await settle(d.env);
    const asWritten = (await simpleParser(d.mx.received.at(-1)!.raw)).html;
    expect(asWritten).toBe(`${html}\n`);
    await d.env.app.accounts.updateProjectSettings(d.env.init.project_id, { relay_tracking: true });
    await sent('tracked');
    await settle(d.env);
    const tracked = await simpleParser(d.mx.received.at(-1)!.raw);
    expect(tracked.subject).toBe('tracked');
    expect(tracked.html).toMatch(/<a href="http:\/\/[^"]+\/t\/c\/[^"]+">the news<\/a>/);
    expect(await verifyDkim(d.mx.received.at(-1)!.raw, d.dns)).toMatchObject({ status: 'pass' });
  });

  it('gives a message without From, Message-ID and Date the envelope sender, its own id and the time, signed', async () => {
    const { port, mx, dns, key, ...d } = await deliveryRelay();
    const s = await authed(port, key);
    const body = 'To: a@dest.test\nSubject: bare\n\nNo From here.\n';
    const r = await data(s, 'news@sender.test', ['a@dest.test'], body);
    expect(r).toMatch(/^250 /);
    await settle(d.env);
    const got = mx.received.at(-1)!.raw.toString();
    const id = idOf(r);
    const head = got.slice(got.indexOf('To: a@dest.test'));
    expect(head).toMatch(
      new RegExp(
        `^To: a@dest.test\r\nSubject: bare\r\nFrom: news@sender.test\r\nMessage-ID: <${id}@[^>]+>\r\nDate: \\w{3}, \\d\\d \\w{3} \\d{4} [\\d:]{8} \\+0000\r\n\r\nNo From here.\r\n\r\n$`,
      ),
    );
    expect(await verifyDkim(mx.received.at(-1)!.raw, dns)).toMatchObject({ status: 'pass', domain: 'sender.test' });
  });

  /** A LIVE env delivering to an MX peer on loopback, with the relay in front of it. */
  async function deliveryRelay() {
    const dns = await startDnsServer();
    const mx = await startMxPeer();
    cleanups.push(
      () => dns.close(),
      () => mx.close(),
    );
    dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
    dns.set('mx.dest.test', { A: ['127.0.0.1'] });
    const d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
    useEnv(d.env);
    cleanups.push(() => d.env.close());
    return { ...d, dns, mx, port: await startRelay(d.env) };
  }
});

const swaks = ['/usr/bin/swaks', '/usr/local/bin/swaks'].find((p) => existsSync(p));

describe.skipIf(!swaks)('swaks (when installed)', () => {
  const run = (args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(swaks!, args, { timeout: 20_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      ),
    );

  it('sends with AUTH LOGIN, and gets 535 with a wrong key', async () => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e);
    const base = [
      '--server',
      '127.0.0.1',
      '--port',
      String(port),
      '--from',
      'news@example.com',
      '--to',
      'a@example.net',
    ];
    const ok = await run([...base, '--auth', 'LOGIN', '--auth-user', 'apikey', '--auth-password', key]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/<- {2}250 2\.6\.0 Ok: queued as /);
    expect(await count(e, 'emails', "source = 'SMTP'")).toBe(1);
    const bad = await run([...base, '--auth', 'PLAIN', '--auth-user', 'apikey', '--auth-password', 'svc_test_x']);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/535 5\.7\.8/);
  });
});
