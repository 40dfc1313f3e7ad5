// A token that carries its payload and proves this server made it: base64url(payload, MAC), the
// MAC the first 128 bits of HMAC-SHA256(key, payload): far beyond guessing, and short enough for
// a link. The tracking links and the one-click unsubscribe links are such tokens.
import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from './hmac.ts';

/** 128 bits of HMAC-SHA256. */
export const TOKEN_MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The first 128 bits of HMAC-SHA256(key, data). */
export const tokenMac = (key: Buffer, data: Buffer | string): Buffer =>
  hmacSha256(key, data).subarray(0, TOKEN_MAC_BYTES);

/** base64url(payload, its MAC under `key`). */
export function sealToken(key: Buffer, payload: Buffer): string {
  return Buffer.concat([payload, tokenMac(key, payload)]).toString('base64url');
}

/**
 * The payload of a token sealed with `key`, or undefined for anything else: longer than
 * `maxChars`, not canonical base64url (Node's decoder skips stray characters, which would let
 * many strings stand for one token), a payload under `minPayload` bytes, or a MAC that does not
 * match, compared in constant time.
 */
export function openToken(key: Buffer, token: string, maxChars: number, minPayload: number): Buffer | undefined {
  if (token.length > maxChars || !BASE64URL.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < minPayload + TOKEN_MAC_BYTES || raw.toString('base64url') !== token) return undefined;
  const payload = raw.subarray(0, raw.length - TOKEN_MAC_BYTES);
  return timingSafeEqual(tokenMac(key, payload), raw.subarray(raw.length - TOKEN_MAC_BYTES)) ? payload : undefined;
}
