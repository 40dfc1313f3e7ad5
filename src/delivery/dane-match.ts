/**
 * DANE for SMTP (RFC 7672), the decisions without I/O: which TLSA records count, what a
 * destination requires, and whether a server's certificate chain satisfies its records.
 */
import { createHash, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { TlsResultType } from './job.ts';
import type { TlsaAnswer, TlsaRecord } from './dnssec-resolver.ts';

const DANE_TA = 2;
const DANE_EE = 3;
/** Matching types (RFC 6698 2.1.3): the digest's length, 0 for the full data. */
const DIGEST_LENGTH: Record<number, number> = { 0: 0, 1: 32, 2: 64 };
const DIGEST: Record<number, string> = { 1: 'sha256', 2: 'sha512' };

export type DaneMatch =
  { ok: true; usage: number; matched: string } | { ok: false; result: TlsResultType; reason: string };

export type DaneRequirement =
  /** No DANE: an insecure or authenticated-empty answer (other policies, e.g. MTA-STS, apply). */
  | { kind: 'none' }
  /** A secure TLSA RRset with no usable record: TLS is mandatory, unauthenticated (RFC 7672 2.2). */
  | { kind: 'tls-only' }
  /** The usable records the server's chain must match. */
  | { kind: 'dane'; records: TlsaRecord[] }
  /** The TLSA lookup failed (bogus or no answer): delivery waits (RFC 7672 2.1.1). */
  | { kind: 'defer'; reason: string };

/** RFC 7672 3.1: only DANE-TA(2) and DANE-EE(3) are usable; selectors 0/1; matching 0/1/2. */
export function usableTlsa(records: TlsaRecord[]): TlsaRecord[] {
  return records.filter(
    (r) =>
      (r.usage === DANE_TA || r.usage === DANE_EE) &&
      (r.selector === 0 || r.selector === 1) &&
      r.matchingType in DIGEST_LENGTH &&
      // A digest of the wrong length is malformed (RFC 7671 4): it can match nothing.
      (r.matchingType === 0 ? r.data.length > 0 : r.data.length === DIGEST_LENGTH[r.matchingType]),
  );
}

/** What a TLSA answer asks of the delivery. */
export function daneRequirement(answer: TlsaAnswer): DaneRequirement {
  if (answer.state === 'bogus' || answer.state === 'error') return { kind: 'defer', reason: answer.reason };
  if (answer.state !== 'secure') return { kind: 'none' };
  const records = usableTlsa(answer.records);
  return records.length > 0 ? { kind: 'dane', records } : { kind: 'tls-only' };
}

/** Presentation form for TLS reports' policy-string: "3 1 1 ab12...". */
export function tlsaText(r: TlsaRecord): string {
  return `${r.usage} ${r.selector} ${r.matchingType} ${r.data.toString('hex')}`;
}

/**
 * Checks a server's chain (DER, leaf first) against the records (RFC 7672 3.1):
 * - DANE-EE: the leaf matches; no name check and no expiry check (3.1.1).
 * - DANE-TA: a certificate of the chain matches as trust anchor (or a full SPKI record is the
 *   key that signed the chain's last certificate: 3.1.2 lets the server leave the TA out), the
 *   chain from the leaf up to it verifies (each issued and signed by the next, each below the
 *   anchor valid at `now`), and the leaf's name is one of `names` (3.2.2, 3.2.3: a DNS-ID,
 *   a wildcard standing for one label).
 */
export function matchTlsa(records: TlsaRecord[], chain: Buffer[], names: string[], now: Date): DaneMatch {
  const usable = usableTlsa(records);
  if (usable.length === 0)
    return { ok: false, result: 'tlsa-invalid', reason: 'no usable TLSA record (DANE-TA or DANE-EE)' };
  const certs = parseChain(chain);
  if (!certs) return { ok: false, result: 'validation-failure', reason: 'the server sent no certificate that parses' };
  const ee = usable.find((r) => r.usage === DANE_EE && matches(r, certs[0]!));
  if (ee) return { ok: true, usage: DANE_EE, matched: tlsaText(ee) };
  const failures: DaneMatch[] = [];
  for (const record of usable.filter((r) => r.usage === DANE_TA)) {
    const verdict = matchTrustAnchor(record, certs, names, now);
    if (verdict.ok) return verdict;
    failures.push(verdict);
  }
  return mostTelling(failures, usable, names);
}

function matchTrustAnchor(record: TlsaRecord, certs: X509Certificate[], names: string[], now: Date): DaneMatch {
  const at = certs.findIndex((c) => matches(record, c));
  const top = certs.at(-1)!;
  const key = at < 0 ? bareKey(record) : undefined;
  if (at < 0 && !(key && top.verify(key)))
    return { ok: false, result: 'validation-failure', reason: 'no certificate of the chain matches' };
  const below = at < 0 ? certs : certs.slice(0, at + 1);
  const broken = brokenLink(below);
  if (broken) return { ok: false, result: 'validation-failure', reason: broken };
  // The anchor's own dates do not count (the DNS vouches for its key); those of the certificates below it do.
  const dated = at < 0 ? below : below.slice(0, Math.max(at, 1));
  const expired = dated.find((c) => !validAt(c, now));
  if (expired) {
    return {
      ok: false,
      result: 'certificate-expired',
      reason: `${describe(expired)} is not valid at ${now.toISOString()}`,
    };
  }
  if (!names.some((name) => certs[0]!.checkHost(name.replace(/\.$/, ''), { partialWildcards: false }) !== undefined)) {
    return {
      ok: false,
      result: 'certificate-host-mismatch',
      reason: `the certificate is not valid for ${names.join(' or ')}`,
    };
  }
  return { ok: true, usage: DANE_TA, matched: tlsaText(record) };
}

/** Why the chain from the leaf to its last certificate does not hold, if it does not. */
function brokenLink(certs: X509Certificate[]): string | undefined {
  for (let i = 0; i + 1 < certs.length; i++) {
    const [child, parent] = [certs[i]!, certs[i + 1]!];
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      return `${describe(child)} is not signed by ${describe(parent)}`;
    }
  }
  return undefined;
}

/** A trust anchor failure says more than "nothing matched"; without one, why EE did not match. */
function mostTelling(failures: DaneMatch[], usable: TlsaRecord[], names: string[]): DaneMatch {
  const order: TlsResultType[] = ['certificate-host-mismatch', 'certificate-expired', 'validation-failure'];
  for (const result of order) {
    const found = failures.find((f) => !f.ok && f.result === result);
    if (found) return found;
  }
  return {
    ok: false,
    result: 'validation-failure',
    reason: `the certificate of ${names[0] ?? 'the server'} matches none of its TLSA records (${usable.map(tlsaText).join(', ')})`,
  };
}

function matches(record: TlsaRecord, cert: X509Certificate): boolean {
  const selected = record.selector === 0 ? cert.raw : spki(cert.publicKey);
  const digest = DIGEST[record.matchingType];
  const value = digest ? createHash(digest).update(selected).digest() : selected;
  return value.equals(record.data);
}

/** The key of a full SPKI record (selector 1, matching 0), which can verify a signature. */
function bareKey(record: TlsaRecord): KeyObject | undefined {
  if (record.selector !== 1 || record.matchingType !== 0) return undefined;
  try {
    return createPublicKey({ key: record.data, format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

const spki = (key: KeyObject) => key.export({ type: 'spki', format: 'der' });

function parseChain(chain: Buffer[]): X509Certificate[] | undefined {
  try {
    return chain.length > 0 ? chain.map((der) => new X509Certificate(der)) : undefined;
  } catch {
    return undefined;
  }
}

const validAt = (cert: X509Certificate, now: Date) => cert.validFromDate <= now && now <= cert.validToDate;

const describe = (cert: X509Certificate) => `the certificate "${cert.subject.replace(/\n/g, ', ')}"`;
