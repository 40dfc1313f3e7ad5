import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../lib/hmac.ts';
import { isUuid } from '../lib/ids.ts';
import { TRACKING_LIMITS } from './schema.ts';

/**
 * What a tracking token stands for: a click on one link of one email (the
 * link's URL travels in the token, so nothing is stored per link), or an open
 * of one email.
 */
export type TrackingTarget = { kind: 'click'; emailId: string; url: string } | { kind: 'open'; emailId: string };

const VERSION = 1;
const KIND = { click: 0x63, open: 0x6f } as const; // 'c', 'o'
const HEADER = 2 + 16; // version, kind, email uuid
/** 128 bits of HMAC-SHA256: far beyond guessing, and keeps the links short. */
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function mac(secret: Buffer, payload: Buffer): Buffer {
  return hmacSha256(secret, payload).subarray(0, MAC_BYTES);
}

/** Signs `target` with the server's tracking secret: base64url(version, kind, email id, [url], mac). */
export function signToken(secret: Buffer, target: TrackingTarget): string {
  const head = Buffer.alloc(HEADER);
  head[0] = VERSION;
  head[1] = KIND[target.kind];
  Buffer.from(target.emailId.replaceAll('-', ''), 'hex').copy(head, 2);
  const payload = target.kind === 'click' ? Buffer.concat([head, Buffer.from(target.url, 'utf8')]) : head;
  return Buffer.concat([payload, mac(secret, payload)]).toString('base64url');
}

/**
 * The target of a token this server signed, or undefined for anything else:
 * malformed, truncated, edited, or signed with another secret. The MAC is
 * compared in constant time, and only canonical base64url is accepted (Node's
 * decoder skips stray characters, which would let many strings stand for one token).
 */
export function verifyToken(secret: Buffer, token: string): TrackingTarget | undefined {
  if (token.length > TRACKING_LIMITS.tokenChars || !BASE64URL.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < HEADER + MAC_BYTES || raw.toString('base64url') !== token) return undefined;
  const payload = raw.subarray(0, raw.length - MAC_BYTES);
  if (!timingSafeEqual(mac(secret, payload), raw.subarray(raw.length - MAC_BYTES))) return undefined;
  if (payload[0] !== VERSION) return undefined;
  const hex = payload.subarray(2, HEADER).toString('hex');
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  if (!isUuid(emailId)) return undefined;
  if (payload[1] === KIND.open && payload.length === HEADER) return { kind: 'open', emailId };
  if (payload[1] === KIND.click && payload.length > HEADER) {
    return { kind: 'click', emailId, url: payload.subarray(HEADER).toString('utf8') };
  }
  return undefined;
}
