import { generateKeyPairSync } from 'node:crypto';
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../test/peers/dns.ts';
import { authenticateMessage, resolverFor, type Resolver } from './auth.ts';

const HOST = 'mx.svc.test';

const message = (from: string, subject: string) =>
  Buffer.from(
    [
      `From: ${from}`,
      'To: support@in.svc.test',
      `Subject: ${subject}`,
      'Date: Tue, 03 Nov 2026 10:02:00 +0000',
      `Message-ID: <${subject.replace(/\W/g, '')}@example>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello,',
      '',
      'the invoice is attached.',
      '',
    ].join('\r\n'),
  );

let dns: DnsServer;
let resolver: Resolver;
const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

/** The message with the DKIM-Signature field of sender.test's key s1 on top. */
async function signed(unsigned: Buffer, body = (m: Buffer) => m): Promise<Buffer> {
  // mailauth's types name the key's fields at the top; its signer reads them from signatureData.
  const options = { signatureData: [{ signingDomain: 'sender.test', selector: 's1', privateKey }] };
  const r = await dkimSign(unsigned, options as unknown as DKIMSignOptions);
  expect(r.errors).toEqual([]);
  return Buffer.concat([Buffer.from(r.signatures), body(unsigned)]);
}

beforeAll(async () => {
  dns = await startDnsServer();
  // Short waits: the silent server below must cost a fraction of a second, not the default 2 s × 2.
  resolver = resolverFor([dns.server], { timeoutMs: 300, tries: 1 });
  const spki = publicKey.toString('base64');
  dns.set('s1._domainkey.sender.test', { TXT: [`v=DKIM1; k=rsa; p=${spki}`] });
  dns.set('sender.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.set('_dmarc.sender.test', { TXT: ['v=DMARC1; p=reject'] });
  dns.set('bank.test', { TXT: ['v=spf1 ip4:192.0.2.0/24 -all'] });
  dns.set('_dmarc.bank.test', { TXT: ['v=DMARC1; p=reject'] });
  dns.set('silent.test', { silent: true });
  dns.set('quiet.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.set('_dmarc.quiet.test', { silent: true });
});

afterAll(async () => {
  await dns.close();
});

describe('authenticateMessage', () => {
  it('passes SPF, an aligned DKIM signature and DMARC for a signed message from an allowed IP', async () => {
    const raw = await signed(message('Ada <ada@sender.test>', 'Signed invoice'));
    const r = await authenticateMessage(
      raw,
      { ip: '127.0.0.1', helo: 'mail.sender.test', mailFrom: 'bounces@sender.test' },
      { hostname: HOST, resolver },
    );
    expect(r.spf).toEqual({ result: 'pass', domain: 'sender.test' });
    expect(r.dkim).toEqual([{ result: 'pass', domain: 'sender.test', selector: 's1', aligned: true }]);
    expect(r.dmarc).toEqual({ result: 'pass', policy: 'reject', domain: 'sender.test' });
    expect(r.arc).toEqual({ result: 'none' });
    expect(r.header).toMatch(
      /^mx\.svc\.test; dkim=pass header\.i=@sender\.test header\.s=s1 .*; spf=pass .*; dmarc=pass /,
    );
    expect(r.header).not.toMatch(/[\r\n]/);
  });

  it('does not pass a body changed after signing, and DMARC passes on the aligned SPF alone', async () => {
    const raw = await signed(message('Ada <ada@sender.test>', 'Tampered'), (m) =>
      Buffer.from(m.toString().replace('invoice', 'INVOICE')),
    );
    const r = await authenticateMessage(
      raw,
      { ip: '127.0.0.1', helo: 'mail.sender.test', mailFrom: 'ada@sender.test' },
      { hostname: HOST, resolver },
    );
    // mailauth reports a body that no longer matches its hash as neutral ("body hash did not
    // verify"); a signature that does not pass counts for no alignment.
    expect(r.dkim).toEqual([{ result: 'neutral', domain: 'sender.test', selector: 's1', aligned: false }]);
    expect(r.dmarc.result).toBe('pass');
  });

  it('fails SPF and DMARC, policy reject, for a forged unsigned sender', async () => {
    const r = await authenticateMessage(
      message('CEO <ceo@bank.test>', 'Urgent transfer'),
      { ip: '203.0.113.9', helo: 'bank.test', mailFrom: 'ceo@bank.test' },
      { hostname: HOST, resolver },
    );
    expect(r.spf).toEqual({ result: 'fail', domain: 'bank.test' });
    expect(r.dkim).toEqual([]);
    expect(r.dmarc).toEqual({ result: 'fail', policy: 'reject', domain: 'bank.test' });
    expect(r.header).toMatch(/spf=fail .*dmarc=fail /);
  });

  it('gives temperror, not an exception, when the DNS server does not answer', async () => {
    const started = performance.now();
    const r = await authenticateMessage(
      message('Bob <bob@silent.test>', 'Hello'),
      { ip: '127.0.0.1', helo: 'mail.silent.test', mailFrom: 'bob@silent.test' },
      { hostname: HOST, resolver },
    );
    expect(dns.queries).toContain('TXT silent.test');
    expect(r.spf).toEqual({ result: 'temperror', domain: 'silent.test' });
    expect(r.header).toMatch(/spf=temperror/);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('gives a DMARC temperror when the DMARC record lookup gets no answer', async () => {
    const r = await authenticateMessage(
      message('Bob <bob@quiet.test>', 'Hello again'),
      { ip: '127.0.0.1', helo: 'mail.quiet.test', mailFrom: 'bob@quiet.test' },
      { hostname: HOST, resolver },
    );
    expect(r.spf.result).toBe('pass');
    expect(r.dmarc).toMatchObject({ result: 'temperror', policy: null });
  });
});
