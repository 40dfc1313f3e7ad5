import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generateRsa = promisify(generateKeyPair);

export type RecordPurpose = 'dkim' | 'spf' | 'return-path' | 'dmarc';

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

/** Priority of the return-path MX record we recommend. */
const RETURN_PATH_PRIORITY = 10;

/** DKIM selector of keys made in the month of `nowMs`: svc<yyyymm> (UTC). */
export function selectorFor(nowMs: number): string {
  const d = new Date(nowMs);
  return `svc${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** A fresh RSA-2048 DKIM key: PKCS#8 PEM private key and base64 SPKI DER (the p= tag). */
export async function generateDkimKey(): Promise<{ privateKeyPem: string; publicKeyB64: string }> {
  const { privateKey, publicKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyB64: publicKey.toString('base64') };
}

/** A host name as records name it and checks compare it: lower case, no trailing dot. */
export const normalizeHostname = (name: string) => name.toLowerCase().replace(/\.$/, '');

export const dkimName = (selector: string, domain: string) => `${selector}._domainkey.${domain}`;
export const returnPathName = (domain: string) => `bounces.${domain}`;
export const dmarcName = (domain: string) => `_dmarc.${domain}`;
/** Where svc's DMARC record sends aggregate reports: its inbound MX takes mail for the return-path name. */
export const dmarcReportAddress = (domain: string) => `dmarc@${returnPathName(domain)}`;

export interface RecordInputs {
  domain: string;
  selector: string;
  publicKeyB64: string;
  /** The server's host name (--hostname, else the OS host name): SPF and return-path point at it. */
  hostname: string;
}

/**
 * The four records to publish, in the order a person sets them up. SPF goes on the
 * return-path name (bounces.<domain>), the MAIL FROM domain receivers evaluate it for,
 * where it collides with no SPF record the domain already has at its apex.
 */
export function buildRecords({ domain, selector, publicKeyB64, hostname }: RecordInputs): DnsRecord[] {
  return [
    { type: 'TXT', name: dkimName(selector, domain), value: `v=DKIM1; k=rsa; p=${publicKeyB64}`, purpose: 'dkim' },
    { type: 'TXT', name: returnPathName(domain), value: `v=spf1 a:${hostname} ~all`, purpose: 'spf' },
    { type: 'MX', name: returnPathName(domain), value: `${RETURN_PATH_PRIORITY} ${hostname}`, purpose: 'return-path' },
    {
      type: 'TXT',
      name: dmarcName(domain),
      value: `v=DMARC1; p=none; rua=mailto:${dmarcReportAddress(domain)}`,
      purpose: 'dmarc',
    },
  ];
}
