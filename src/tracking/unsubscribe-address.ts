import { taggedAddresses, type TaggedAddress } from '../lib/tagged-address.ts';

/**
 * The mailto of List-Unsubscribe (RFC 2369; RFC 8058 leaves it beside the https URL):
 * `unsubscribe+<email id>-<tag>@bounces.<from domain>`, on the return-path domain the inbound
 * listener takes mail for. The email id is 32 hex digits; the tag, the first 64 bits of
 * HMAC-SHA256(tracking key, "unsubscribe|<email id>|<recipient>"), names the recipient without
 * showing it and proves svc wrote it. The local part is 61 octets (RFC 5321's limit is 64).
 * Its own prefix keeps it apart from a return path's tag (another key and another input), so
 * a bounce address never unsubscribes anyone and an unsubscribe address never bounces.
 */
const addresses = taggedAddresses('unsubscribe', 16, 'unsubscribe|');

/** The unsubscribe address of one recipient of an email. */
export const unsubscribeAddress = addresses.write;

/** An unsubscribe address taken apart (its syntax only). */
export type UnsubscribeAddress = TaggedAddress;

export const parseUnsubscribeAddress = addresses.parse;

/** The one of `recipients` the address's tag was made for by `key`, or undefined (forged, or another email's). */
export function recipientOfAddress(key: Buffer, a: UnsubscribeAddress, recipients: string[]): string | undefined {
  return recipients.find((r) => addresses.covers(key, a, r));
}
