import { taggedAddresses, type TaggedAddress } from '../lib/tagged-address.ts';

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

const returnPaths = taggedAddresses('bounces', 12);

/** The return path of an email to one recipient. */
export const returnPathAddress = returnPaths.write;

/** A return-path address taken apart (its syntax only): the email id, the tag, and the sending domain. */
export type ReturnPath = TaggedAddress;

export const parseReturnPath = returnPaths.parse;

const IN_TEXT = /bounces\+[0-9a-f]{32}-[0-9a-f]{12}@bounces\.[a-z0-9.-]+[a-z0-9]/gi;

/** Every return path written in a text (a bounce's To, the Return-Path of a quoted message), once each. */
export function returnPathsIn(text: string): string[] {
  return [...new Set(text.match(IN_TEXT) ?? [])];
}

/** True when `rp`'s tag was made by `key` for `recipient`. */
export const returnPathCovers = returnPaths.covers;
