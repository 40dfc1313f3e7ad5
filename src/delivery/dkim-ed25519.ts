import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type MessageParser from 'nodemailer/lib/dkim/message-parser';
import dkimSign from 'nodemailer/lib/dkim/sign';
import { foldLines } from 'nodemailer/lib/mime-funcs';

/**
 * The Ed25519-SHA256 DKIM signature of RFC 8463, beside the RSA one nodemailer's signer
 * makes (it signs RSA only). It reuses what that signer is made of: its relaxed header
 * canonicalization, its header layout and folding, and the body hash svc computed once
 * for both (the same SHA-256 of the same relaxed body).
 */

/** nodemailer's relaxed header canonicalization (RFC 6376 §3.4.2), whose typings describe another function. */
const relaxedHeaders = (
  dkimSign as unknown as {
    relaxedHeaders(
      this: void,
      headers: MessageParser.Header[],
      fieldNames: string,
    ): { headers: string; fieldNames: string };
  }
).relaxedHeaders;

// Parsed once per PEM, as mime.ts keeps its RSA keys.
const keys = new Map<string, KeyObject>();
function keyObject(pem: string): KeyObject {
  let k = keys.get(pem);
  if (!k) keys.set(pem, (k = createPrivateKey(pem)));
  return k;
}

/** The h= tag of a DKIM-Signature field: the header fields it signs, colon-separated. */
export function signedFieldsOf(field: string): string {
  return /\bh=([^;]+)/.exec(field.replace(/\r?\n[ \t]/g, ''))?.[1]?.replace(/\s+/g, '') ?? '';
}

export interface Ed25519Signing {
  domain: string;
  selector: string;
  privateKeyPem: string;
  /** base64 SHA-256 of the relaxed body: the bh= tag. */
  bodyHash: string;
  /** The header fields to sign (colon-separated): those the RSA signature signs, so both cover the same. */
  fieldNames: string;
}

/**
 * The DKIM-Signature field (without its line break) for `headers`: the relaxed header
 * canonicalization and this field with an empty b=, hashed with SHA-256, signed with
 * PureEdDSA Ed25519 (RFC 8463 §3).
 */
export function ed25519Field(headers: MessageParser.Header[], s: Ed25519Signing): string {
  const canonical = relaxedHeaders(headers, s.fieldNames);
  const tags = [
    'v=1',
    'a=ed25519-sha256',
    'c=relaxed/relaxed',
    `d=${s.domain}`,
    'q=dns/txt',
    `s=${s.selector}`,
    `bh=${s.bodyHash}`,
    `h=${canonical.fieldNames}`,
  ].join('; ');
  const unsigned = foldLines(`DKIM-Signature: ${tags}`, 76) + ';\r\n b=';
  const own = relaxedHeaders([{ key: 'dkim-signature', line: unsigned }], 'dkim-signature').headers;
  // The field itself is hashed without the CRLF that ends it (RFC 6376 §3.7).
  const hash = createHash('sha256')
    .update(canonical.headers + own.replace(/\r\n$/, ''), 'latin1')
    .digest();
  const signature = sign(null, hash, keyObject(s.privateKeyPem)).toString('base64');
  return unsigned + signature.replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ').trim();
}
