import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../lib/hmac.ts';
import { uuidOf } from '../lib/ids.ts';

/**
 * The mailto of List-Unsubscribe (RFC 2369; RFC 8058 leaves it beside the https URL):
 * `unsubscribe+<email id>-<tag>@bounces.<from domain>`, on the return-path domain the inbound
 * listener takes mail for. The email id is 32 hex digits; the tag, the first 64 bits of
 * HMAC-SHA256(tracking key, "unsubscribe|<email id>|<recipient>"), names the recipient without
 * showing it and proves svc wrote it. The local part is 61 octets (RFC 5321's limit is 64).
 * Its own prefix keeps it apart from a return path's tag (another key and another input), so
 * a bounce address never unsubscribes anyone and an unsubscribe address never bounces.
 */
const TAG_HEX = 16;
const LOCAL = /^unsubscribe\+([0-9a-f]{32})-([0-9a-f]{16})$/;

const compact = (emailId: string) => emailId.replaceAll('-', '').toLowerCase();
const tagOf = (key: Buffer, id: string, recipient: string) =>
  hmacSha256(key, `unsubscribe|${id}|${recipient.toLowerCase()}`).toString('hex').slice(0, TAG_HEX);

/** The unsubscribe address of one recipient of an email. */
export function unsubscribeAddress(key: Buffer, emailId: string, recipient: string, fromDomain: string): string {
  const id = compact(emailId);
  return `unsubscribe+${id}-${tagOf(key, id, recipient)}@bounces.${fromDomain.toLowerCase()}`;
}

/** An unsubscribe address taken apart (its syntax only). */
export interface UnsubscribeAddress {
  emailId: string;
  tag: string;
  fromDomain: string;
}

export function parseUnsubscribeAddress(address: string): UnsubscribeAddress | null {
  const at = address.lastIndexOf('@');
  const m = at < 0 ? null : LOCAL.exec(address.slice(0, at).toLowerCase());
  const host = address.slice(at + 1).toLowerCase();
  if (!m || !host.startsWith('bounces.')) return null;
  return { emailId: uuidOf(m[1]!), tag: m[2]!, fromDomain: host.slice('bounces.'.length) };
}

/** The one of `recipients` the address's tag was made for by `key`, or undefined (forged, or another email's). */
export function recipientOfAddress(key: Buffer, a: UnsubscribeAddress, recipients: string[]): string | undefined {
  const got = Buffer.from(a.tag);
  const id = compact(a.emailId);
  return recipients.find((r) => timingSafeEqual(Buffer.from(tagOf(key, id, r)), got));
}
