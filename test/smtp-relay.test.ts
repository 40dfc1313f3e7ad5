import { describe, expect, it } from 'vitest';
import { count } from './harness.ts';
import { smtpTalk } from './peers/smtp-talk.ts';
import { makeCertificate } from './peers/certificates.ts';
import { data, idOf, keyIdOf, relaySuite, simple, transport } from './relay-helpers.ts';

// The SMTP relay (issue 8): sessions, STARTTLS and limits. Messages and LIVE sends:
// test/smtp-relay-messages.test.ts.

const { cleanups, relay, startRelay, testEnv, emailRow, authed } = relaySuite();

describe('sessions', () => {
  it('greets, and its EHLO offers PIPELINING, 8BITMIME, SMTPUTF8, SIZE 25 MiB and AUTH PLAIN LOGIN', async () => {
    await startRelay(await testEnv()).then(async (port) => {
      const s = await smtpTalk(port);
      cleanups.push(() => s.close());
      expect(await s.reply()).toMatch(/^220 .*ESMTP/);
      const ehlo = await s.send('EHLO client.test');
      for (const ext of [
        'PIPELINING',
        '8BITMIME',
        'SMTPUTF8',
        'ENHANCEDSTATUSCODES',
        'SIZE 26214400',
        'AUTH PLAIN LOGIN',
      ]) {
        expect(ehlo.split('\r\n')).toContain(`250${ehlo.endsWith(ext) ? ' ' : '-'}${ext}`);
      }
      // No certificate, no STARTTLS (and never smtp-server's built-in test certificate).
      expect(ehlo).not.toContain('STARTTLS');
    });
  });

  it('answers MAIL without AUTH with 530 5.7.0', async () => {
    const port = await startRelay(await testEnv());
    const s = await smtpTalk(port);
    cleanups.push(() => s.close());
    await s.reply();
    await s.send('EHLO client.test');
    expect(await s.send('MAIL FROM:<news@example.com>')).toMatch(/^530 5\.7\.0 /);
  });

  it.each([
    { name: 'a wrong password', user: 'apikey', pass: 'svc_test_wrong' },
    { name: 'another username', user: 'admin', pass: 'KEY' },
    { name: 'no key at all', user: 'apikey', pass: 'hunter2' },
  ])('refuses AUTH with $name: 535 5.7.8', async ({ user, pass }) => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e);
    const err = await transport(port, pass === 'KEY' ? key : pass, {
      auth: { user, pass: pass === 'KEY' ? key : pass },
    })
      .sendMail({ from: 'news@example.com', to: 'a@example.net', subject: 'x', text: 'x' })
      .catch((x: { response?: string }) => x);
    expect((err as { response?: string }).response).toMatch(/^535 5\.7\.8 /);
    expect(await count(e, 'emails')).toBe(0);
  });

  it('refuses a revoked and an expired key with 535 5.7.8, and a READ_ONLY key with a clear 535', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const revoked = await e.key();
    await e.app.keys.revokeKey(await keyIdOf(e, revoked));
    const expired = await e.key({ expires_at: new Date(e.clock.now() + 1000).toISOString() });
    e.clock.advance(2000);
    const readOnly = await e.key({ permissions: 'READ_ONLY' });
    for (const [key, text] of [
      [revoked, /^535 5\.7\.8 .*revoked/],
      [expired, /^535 5\.7\.8 .*expired/],
      [readOnly, /^535 5\.7\.8 This API key is READ_ONLY and cannot send/],
    ] as const) {
      const s = await smtpTalk(port);
      cleanups.push(() => s.close());
      await s.reply();
      await s.send('EHLO client.test');
      expect(await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`)).toMatch(text);
    }
  });

  it('applies a revocation to an open session at its next message', async () => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e);
    const s = await authed(port, key);
    expect(await data(s, 'news@example.com', ['a@example.net'], simple())).toMatch(/^250 /);
    await e.app.keys.revokeKey(await keyIdOf(e, key));
    expect(await s.send('MAIL FROM:<news@example.com>')).toMatch(/^535 5\.7\.8 .*revoked/);
    expect(await count(e, 'emails')).toBe(1);
  });

  it('rate-limits failed AUTH per client IP: 454 4.7.0 after 10 failures, until the window ends', async () => {
    const e = await testEnv();
    const key = await e.key();
    const port = await startRelay(e, { authFailures: { perIp: 10, windowMs: 60_000 } });
    const s = await smtpTalk(port);
    cleanups.push(() => s.close());
    await s.reply();
    await s.send('EHLO client.test');
    const bad = `AUTH PLAIN ${Buffer.from('\0apikey\0svc_test_nope').toString('base64')}`;
    for (let i = 0; i < 10; i++) expect(await s.send(bad)).toMatch(/^535 5\.7\.8 /);
    const good = `AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`;
    expect(await s.send(good)).toMatch(/^454 4\.7\.0 Too many failed authentications from .*try again in 60 s/);
    e.clock.advance(60_000);
    expect(await s.send(good)).toMatch(/^235 /);
  });

  it('drops an idle session with 421 after the idle timeout', async () => {
    const port = await startRelay(await testEnv(), { idleTimeoutMs: 150 });
    const s = await smtpTalk(port);
    cleanups.push(() => s.close());
    await s.reply();
    expect(await s.reply()).toMatch(/^421 .*Timeout/);
    await s.closed;
  });

  it('answers a session over the limit with 421 and closes it', async () => {
    const port = await startRelay(await testEnv(), { maxSessions: 2 });
    const a = await smtpTalk(port);
    const b = await smtpTalk(port);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    expect(await a.reply()).toMatch(/^220 /);
    expect(await b.reply()).toMatch(/^220 /);
    const c = await smtpTalk(port);
    cleanups.push(() => c.close());
    expect(await c.reply()).toMatch(/^421 .*Too many connected clients/);
    await c.closed;
    expect(relay()!.sessions()).toBe(2);
  });
});

describe('STARTTLS', () => {
  it('refuses AUTH before STARTTLS on a non-loopback listener, and takes it after, with a self-signed certificate', async () => {
    const e = await testEnv();
    const key = await e.key();
    const cert = await makeCertificate({ names: ['relay.svc.test'], ips: ['127.0.0.1'] });
    const port = await startRelay(e, {
      plainAuth: false,
      tls: { cert: Buffer.from(cert.cert), key: Buffer.from(cert.key) },
    });
    const s = await smtpTalk(port);
    cleanups.push(() => s.close());
    await s.reply();
    const ehlo = await s.send('EHLO client.test');
    expect(ehlo).toContain('250-STARTTLS');
    expect(await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`)).toMatch(/^538 /);

    const t = transport(port, key, { ignoreTLS: false, requireTLS: true, tls: { ca: cert.ca } });
    const info = await t.sendMail({ from: 'news@example.com', to: 'a@example.net', subject: 'Over TLS', text: 'x' });
    expect(info.response).toMatch(/^250 /);
    expect(await emailRow(idOf(info.response))).toMatchObject({ subject: 'Over TLS', source: 'SMTP' });
    // A client that does not trust the certificate does not send.
    const untrusted = await transport(port, key, { ignoreTLS: false, requireTLS: true })
      .sendMail({ from: 'news@example.com', to: 'a@example.net', subject: 'x', text: 'x' })
      .catch((x: Error) => x);
    expect(untrusted).toBeInstanceOf(Error);
    expect(await count(e, 'emails')).toBe(1);
  });
});
describe('limits', () => {
  it('refuses a declared SIZE over 25 MiB at MAIL, and a larger streamed message with 552 5.3.4', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    expect(await s.send(`MAIL FROM:<news@example.com> SIZE=${25 * 1024 * 1024 + 1}`)).toMatch(/^552 5\.3\.4 /);
    const line = `${'x'.repeat(998)}\r\n`;
    const body = `From: news@example.com\r\nTo: a@example.net\r\nSubject: big\r\n\r\n${line.repeat(26 * 1050)}`;
    expect(await data(s, 'news@example.com', ['a@example.net'], body)).toMatch(/^552 5\.3\.4 /);
    expect(await count(e, 'emails')).toBe(0);
    // The session goes on.
    expect(await data(s, 'news@example.com', ['a@example.net'], simple())).toMatch(/^250 /);
  });

  it('answers a message it cannot pass through with a reply that says why, and takes the next one', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    const head = 'From: news@example.com\r\nTo: a@example.net\r\nSubject: limits\r\n';
    const send = (message: string) => data(s, 'news@example.com', ['a@example.net'], message);
    expect(await send(`${head}X-Big: ${'x'.repeat(103_000)}\r\n\r\nx`)).toMatch(
      /^552 5\.3\.4 The header block is larger than 100 KiB/,
    );
    expect(await send(`${head}this is not a field\r\n\r\nx`)).toMatch(
      /^554 5\.6\.0 The header block has a line that is not a header field: "this is not a field"/,
    );
    const part = (i: number) => `--b\r\nContent-Type: application/pdf; name="f${i}.pdf"\r\n\r\n%PDF\r\n`;
    const files = (n: number) =>
      `${head}Content-Type: multipart/mixed; boundary=b\r\n\r\n${Array.from({ length: n }, (_, i) => part(i)).join('')}--b--`;
    expect(await send(files(11))).toMatch(/^554 5\.6\.0 The request failed validation: attachments: at most 10/);
    const nested = Array.from(
      { length: 22 },
      (_, i) => `Content-Type: multipart/mixed; boundary=n${i}\r\n\r\n--n${i}\r\n`,
    );
    expect(await send(`${head}${nested.join('')}\r\nx`)).toMatch(
      /^554 5\.6\.0 The message nests MIME parts more than 20 deep/,
    );
    expect(await count(e, 'emails')).toBe(0);
    expect(await send(files(10))).toMatch(/^250 /);
  });

  it('refuses at RCPT an address the API would refuse, with 553 5.1.3', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    await s.send('MAIL FROM:<news@example.com>');
    expect(await s.send('RCPT TO:<üser@example.net>')).toMatch(/^553 5\.1\.3 üser@example\.net is not an address/);
    expect(await s.send('RCPT TO:<a@example.net>')).toMatch(/^250 /);
  });

  it('answers the 51st recipient with 452 4.5.3', async () => {
    const e = await testEnv();
    const port = await startRelay(e);
    const s = await authed(port, await e.key());
    await s.send('MAIL FROM:<news@example.com>');
    for (let i = 0; i < 50; i++) expect(await s.send(`RCPT TO:<r${i}@example.net>`)).toMatch(/^250 /);
    expect(await s.send('RCPT TO:<r50@example.net>')).toMatch(/^452 4\.5\.3 /);
  });
});
