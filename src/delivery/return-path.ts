import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../lib/hmac.ts';
import { uuidOf } from '../lib/ids.ts';

/**
 * The envelope sender of LIVE mail (issue 15): `bounces+<email id>-<tag>@bounces.<from
 * domain>`, on the return-path subdomain that `svc domains add` publishes, one per
 * recipient. The email id (32 hex digits) says which email a bounce is about; the tag,
 * the first 48 bits of HMAC-SHA256(server secret, "<email id>|<recipient>"), proves that
 * svc wrote the address for that email and that recipient. A bounce is applied only to
 * the recipient its tag was made for (docs/decisions.md, "Delivery"), so the address one
 * recipient sees cannot bounce or suppress anyone else.
 */
export const RETURN_PATH_SECRET = 'return-path';

const TAG_HEX = 12;
const LOCAL = /^bounces\+([0-9a-f]{32})-([0-9a-f]{12})$/;

const tagOf = (key: Buffer, id: string, recipient: string) =>
  hmacSha256(key, `${id}|${recipient.toLowerCase()}`).toString('hex').slice(0, TAG_HEX);

const compact = (emailId: string) => emailId.replaceAll('-', '').toLowerCase();

/** The return path of an email to one recipient. */
export function returnPathAddress(key: Buffer, emailId: string, recipient: string, fromDomain: string): string {
  const id = compact(emailId);
  return `bounces+${id}-${tagOf(key, id, recipient)}@bounces.${fromDomain.toLowerCase()}`;
}

/** A return-path address taken apart (its syntax only): the email id, the tag, and the sending domain. */
export interface ReturnPath {
  emailId: string;
  tag: string;
  fromDomain: string;
}

export function parseReturnPath(address: string): ReturnPath | null {
  const at = address.lastIndexOf('@');
  const m = LOCAL.exec(address.slice(0, at).toLowerCase());
  const host = address.slice(at + 1).toLowerCase();
  if (at < 0 || !m || !host.startsWith('bounces.')) return null;
  return { emailId: uuidOf(m[1]!), tag: m[2]!, fromDomain: host.slice('bounces.'.length) };
}

const IN_TEXT = /bounces\+[0-9a-f]{32}-[0-9a-f]{12}@bounces\.[a-z0-9.-]+[a-z0-9]/gi;

/** Every return path written in a text (a bounce's To, the Return-Path of a quoted message), once each. */
export function returnPathsIn(text: string): string[] {
  return [...new Set(text.match(IN_TEXT) ?? [])];
}

/** True when `rp`'s tag was made by `key` for `recipient`. */
export function returnPathCovers(key: Buffer, rp: ReturnPath, recipient: string): boolean {
  const want = Buffer.from(tagOf(key, compact(rp.emailId), recipient));
  const got = Buffer.from(rp.tag);
  return want.length === got.length && timingSafeEqual(want, got);
}
