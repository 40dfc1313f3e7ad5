import { createHash, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeCertificate } from '../../test/peers/certificates.ts';
import { daneRequirement, matchTlsa, tlsaText, usableTlsa } from './dane-match.ts';
import type { TlsaRecord } from './dnssec-resolver.ts';

const MX = 'mx.example.com';

/** A CA-signed server certificate, as DER: the leaf and its CA. */
async function chainFor(opts: Parameters<typeof makeCertificate>[0]) {
  const made = await makeCertificate(opts);
  return { leaf: new X509Certificate(made.cert), ca: new X509Certificate(made.ca) };
}

const spki = (c: X509Certificate) => c.publicKey.export({ type: 'spki', format: 'der' });
const sha = (alg: string, data: Buffer) => createHash(alg).update(data).digest();
const record = (usage: number, selector: number, matchingType: number, data: Buffer): TlsaRecord => ({
  usage,
  selector,
  matchingType,
  data,
});

describe('DANE matching (RFC 7672 3.1)', () => {
  let good: Awaited<ReturnType<typeof chainFor>>;
  let expired: Awaited<ReturnType<typeof chainFor>>;
  let other: Awaited<ReturnType<typeof chainFor>>;
  let now: Date;

  beforeAll(async () => {
    good = await chainFor({ names: [MX] });
    expired = await chainFor({
      names: [MX],
      notBefore: new Date('2020-01-01T00:00:00Z'),
      notAfter: new Date('2021-01-01T00:00:00Z'),
    });
    other = await chainFor({ names: ['*.example.net'] });
    now = new Date(good.leaf.validFromDate.getTime() + 86_400_000);
  });

  describe('DANE-EE(3)', () => {
    it('matches the leaf by its SPKI digest (3 1 1), the usual record', () => {
      const r = record(3, 1, 1, sha('sha256', spki(good.leaf)));
      expect(matchTlsa([r], [good.leaf.raw, good.ca.raw], [MX], now)).toEqual({
        ok: true,
        usage: 3,
        matched: tlsaText(r),
      });
    });

    it('matches the whole certificate, full or by SHA-512 (3 0 0, 3 0 2), and the full SPKI (3 1 0)', () => {
      for (const r of [
        record(3, 0, 0, good.leaf.raw),
        record(3, 0, 2, sha('sha512', good.leaf.raw)),
        record(3, 1, 0, spki(good.leaf)),
      ]) {
        expect(matchTlsa([r], [good.leaf.raw], [MX], now)).toMatchObject({ ok: true, usage: 3 });
      }
    });

    it('checks neither the name nor the dates: an expired leaf for another name passes (3.1.1)', () => {
      const r = record(3, 1, 1, sha('sha256', spki(expired.leaf)));
      expect(matchTlsa([r], [expired.leaf.raw], ['smtp.elsewhere.org'], now)).toMatchObject({ ok: true, usage: 3 });
    });

    it('fails with validation-failure when the leaf is another certificate', () => {
      const r = record(3, 1, 1, sha('sha256', spki(other.leaf)));
      const verdict = matchTlsa([r], [good.leaf.raw, good.ca.raw], [MX], now);
      expect(verdict).toMatchObject({ ok: false, result: 'validation-failure' });
      expect(!verdict.ok && verdict.reason).toContain(tlsaText(r));
    });

    it('does not take a record of the CA as DANE-EE', () => {
      const r = record(3, 0, 1, sha('sha256', good.ca.raw));
      expect(matchTlsa([r], [good.leaf.raw, good.ca.raw], [MX], now)).toMatchObject({ ok: false });
    });
  });

  describe('DANE-TA(2)', () => {
    it('accepts a chain up to the CA the record names, for the MX host name', () => {
      const r = record(2, 0, 1, sha('sha256', good.ca.raw));
      expect(matchTlsa([r], [good.leaf.raw, good.ca.raw], [MX], now)).toEqual({
        ok: true,
        usage: 2,
        matched: tlsaText(r),
      });
    });

    it('accepts the CA by its SPKI digest, and a leaf name matching the TLSA base domain instead', () => {
      const r = record(2, 1, 2, sha('sha512', spki(good.ca)));
      expect(matchTlsa([r], [good.leaf.raw, good.ca.raw], ['mx.example.org', MX], now)).toMatchObject({ ok: true });
    });

    it('accepts a full SPKI record of a CA the server left out of its chain (3.1.2)', () => {
      const r = record(2, 1, 0, spki(good.ca));
      expect(matchTlsa([r], [good.leaf.raw], [MX], now)).toMatchObject({ ok: true, usage: 2 });
      expect(matchTlsa([record(2, 1, 0, spki(other.ca))], [good.leaf.raw], [MX], now)).toMatchObject({
        ok: false,
        result: 'validation-failure',
      });
    });

    it('fails with certificate-host-mismatch for a name the leaf does not hold', () => {
      const r = record(2, 0, 1, sha('sha256', good.ca.raw));
      const verdict = matchTlsa([r], [good.leaf.raw, good.ca.raw], ['mx.example.org'], now);
      expect(verdict).toMatchObject({ ok: false, result: 'certificate-host-mismatch' });
    });

    it('lets a wildcard stand for one label only (3.2.3)', () => {
      const r = record(2, 0, 1, sha('sha256', other.ca.raw));
      const chain = [other.leaf.raw, other.ca.raw];
      expect(matchTlsa([r], chain, ['mx.example.net'], now)).toMatchObject({ ok: true });
      expect(matchTlsa([r], chain, ['a.mx.example.net'], now)).toMatchObject({ result: 'certificate-host-mismatch' });
    });

    it('fails with certificate-expired when the leaf is past its dates', () => {
      const r = record(2, 0, 1, sha('sha256', expired.ca.raw));
      const verdict = matchTlsa([r], [expired.leaf.raw, expired.ca.raw], [MX], now);
      expect(verdict).toMatchObject({ ok: false, result: 'certificate-expired' });
    });

    it('fails with validation-failure when the anchor did not sign the chain', () => {
      const r = record(2, 0, 1, sha('sha256', other.ca.raw));
      const verdict = matchTlsa([r], [good.leaf.raw, other.ca.raw], [MX], now);
      expect(verdict).toMatchObject({ ok: false, result: 'validation-failure' });
      expect(!verdict.ok && verdict.reason).toContain('is not signed by');
    });

    it('passes when one of several records matches', () => {
      const records = [record(3, 1, 1, sha('sha256', spki(other.leaf))), record(2, 0, 1, sha('sha256', good.ca.raw))];
      expect(matchTlsa(records, [good.leaf.raw, good.ca.raw], [MX], now)).toMatchObject({ ok: true, usage: 2 });
    });
  });

  describe('unusable records', () => {
    it('keeps only DANE-TA and DANE-EE with known selectors and matching types of the right length', () => {
      const digest = sha('sha256', spki(good.leaf));
      const ok = record(3, 1, 1, digest);
      const records = [
        record(0, 1, 1, digest), // PKIX-TA: not for SMTP
        record(1, 1, 1, digest), // PKIX-EE: not for SMTP
        record(3, 2, 1, digest), // unknown selector
        record(3, 1, 3, digest), // unknown matching type
        record(3, 1, 1, digest.subarray(0, 20)), // a SHA-256 that is not 32 octets
        record(3, 1, 2, digest), // a SHA-512 that is not 64 octets
        ok,
      ];
      expect(usableTlsa(records)).toEqual([ok]);
    });

    it('fails with tlsa-invalid when no record is usable, even one that would match', () => {
      const r = record(1, 1, 1, sha('sha256', spki(good.leaf)));
      expect(matchTlsa([r], [good.leaf.raw], [MX], now)).toMatchObject({ ok: false, result: 'tlsa-invalid' });
    });

    it('fails with validation-failure when the server sends no certificate', () => {
      const r = record(3, 1, 1, sha('sha256', spki(good.leaf)));
      expect(matchTlsa([r], [], [MX], now)).toMatchObject({ ok: false, result: 'validation-failure' });
    });
  });

  it('says what a TLSA answer requires of the delivery', () => {
    const usable = record(3, 1, 1, sha('sha256', spki(good.leaf)));
    const pkix = record(1, 1, 1, usable.data);
    expect(daneRequirement({ state: 'secure', records: [pkix, usable], base: MX })).toEqual({
      kind: 'dane',
      records: [usable],
    });
    expect(daneRequirement({ state: 'secure', records: [pkix], base: MX })).toEqual({ kind: 'tls-only' });
    expect(daneRequirement({ state: 'secure-none' })).toEqual({ kind: 'none' });
    expect(daneRequirement({ state: 'insecure' })).toEqual({ kind: 'none' });
    expect(daneRequirement({ state: 'bogus', reason: 'SERVFAIL' })).toEqual({ kind: 'defer', reason: 'SERVFAIL' });
    expect(daneRequirement({ state: 'error', reason: 'timeout' })).toEqual({ kind: 'defer', reason: 'timeout' });
  });

  it('writes a record in presentation form', () => {
    expect(tlsaText(record(3, 1, 1, Buffer.from([0xab, 0x12, 0x00])))).toBe('3 1 1 ab1200');
  });
});
