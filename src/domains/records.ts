import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { DkimAlgorithm, DkimKeyRow } from './dkim-keys.ts';

const generatePair = promisify(generateKeyPair);

/**
 * dkim: a key that signs (required); dkim-next: a rotation's new key, signing once its
 * record is seen; dkim-retiring: a replaced key, kept until its grace period ends;
 * dkim-retired: a key no longer used, whose record can be removed.
 */
export type RecordPurpose =
  | 'dkim'
  | 'dkim-next'
  | 'dkim-retiring'
  | 'dkim-retired'
  | 'spf'
  | 'return-path'
  | 'dmarc'
  /** A receiving domain's MX (issue 34): mail for its routes comes to svc's inbound listener. */
  | 'inbound';

/** A DNS record the domain's owner publishes. */
export interface DnsRecord {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  purpose: RecordPurpose;
}

/** The result of looking one record up. */
export interface RecordCheck {
  type: DnsRecord['type'];
  name: string;
  purpose: RecordPurpose;
  ok: boolean;
  /** Why it failed; null when ok. */
  reason: string | null;
  /** What the lookup found at that name (TXT strings, MX hosts). */
  found: string[];
}

/** A domain is verified when these match; the others are recommendations. */
export const REQUIRED: readonly RecordPurpose[] = ['dkim', 'spf'];

/** The purposes of DKIM key records, whatever the key's state. */
export const DKIM_PURPOSES: readonly RecordPurpose[] = ['dkim', 'dkim-next', 'dkim-retiring', 'dkim-retired'];

/** Priority of the return-path MX record we recommend. */
const RETURN_PATH_PRIORITY = 10;

/** DKIM selector of keys made in the month of `nowMs`: svc<yyyymm> (UTC). */
export function selectorFor(nowMs: number): string {
  const d = new Date(nowMs);
  return `svc${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Bytes of an Ed25519 public key; its SPKI DER is a fixed 12-byte prefix and these. */
const ED25519_KEY_BYTES = 32;

/**
 * A fresh DKIM key: PKCS#8 PEM private key and the p= tag, base64 SPKI DER for RSA-2048,
 * base64 of the raw 32-byte public key for Ed25519 (RFC 8463 §4).
 */
export async function generateDkimKey(
  algorithm: DkimAlgorithm = 'rsa',
): Promise<{ privateKeyPem: string; publicKeyB64: string }> {
  if (algorithm === 'ed25519') {
    const { privateKey, publicKey } = await generatePair('ed25519', {
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    return { privateKeyPem: privateKey, publicKeyB64: publicKey.subarray(-ED25519_KEY_BYTES).toString('base64') };
  }
  const { privateKey, publicKey } = await generatePair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyB64: publicKey.toString('base64') };
}

/** A host name as records name it and checks compare it: lower case, no trailing dot. */
export { normalizeHostname } from '../lib/dns.ts';

export const dkimName = (selector: string, domain: string) => `${selector}._domainkey.${domain}`;
/** The return path's label: svc's envelope sender is bounces+…@bounces.<domain>. */
const RETURN_PATH_LABEL = 'bounces.';
export const returnPathName = (domain: string) => `${RETURN_PATH_LABEL}${domain}`;
/** The domain whose return path `name` is. */
export const apexOfReturnPath = (name: string) =>
  name.startsWith(RETURN_PATH_LABEL) ? name.slice(RETURN_PATH_LABEL.length) : name;
export const dmarcName = (domain: string) => `_dmarc.${domain}`;
/** Where svc's DMARC record sends aggregate reports: its inbound MX takes mail for the return-path name. */
export const dmarcReportAddress = (domain: string) => `dmarc@${returnPathName(domain)}`;

export interface RecordInputs {
  domain: string;
  /** The keys whose records are listed (dkim-keys.ts listedKeys), RSA first. */
  keys: Pick<DkimKeyRow, 'selector' | 'algorithm' | 'public_key' | 'state'>[];
  /** The server's host name (--hostname, else the OS host name): SPF and return-path point at it. */
  hostname: string;
  /** A receiving domain's records add its own MX. */
  receiving?: boolean;
}

const KEY_PURPOSE = {
  active: 'dkim',
  pending: 'dkim-next',
  retiring: 'dkim-retiring',
  retired: 'dkim-retired',
} as const satisfies Record<DkimKeyRow['state'], RecordPurpose>;

/**
 * The records to publish, in the order a person sets them up: a DKIM record per listed
 * key, then SPF, return path and DMARC. SPF goes on the return-path name
 * (bounces.<domain>), the MAIL FROM domain receivers evaluate it for, where it collides
 * with no SPF record the domain already has at its apex.
 */
export function buildRecords({ domain, keys, hostname, receiving }: RecordInputs): DnsRecord[] {
  const dkim = keys.map((k): DnsRecord => ({
    type: 'TXT',
    name: dkimName(k.selector, domain),
    value: `v=DKIM1; k=${k.algorithm}; p=${k.public_key}`,
    purpose: KEY_PURPOSE[k.state],
  }));
  return [
    ...dkim,
    { type: 'TXT', name: returnPathName(domain), value: `v=spf1 a:${hostname} ~all`, purpose: 'spf' },
    { type: 'MX', name: returnPathName(domain), value: `${RETURN_PATH_PRIORITY} ${hostname}`, purpose: 'return-path' },
    {
      type: 'TXT',
      name: dmarcName(domain),
      value: `v=DMARC1; p=none; rua=mailto:${dmarcReportAddress(domain)}`,
      purpose: 'dmarc',
    },
    ...(receiving
      ? [{ type: 'MX', name: domain, value: `${RETURN_PATH_PRIORITY} ${hostname}`, purpose: 'inbound' } as const]
      : []),
  ];
}
