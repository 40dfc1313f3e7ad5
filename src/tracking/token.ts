import { isUuid, uuidBytes, uuidOf } from '../lib/ids.ts';
import { openToken, sealToken } from '../lib/sealed-token.ts';
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

/** Signs `target` with the server's tracking secret: base64url(version, kind, email id, [url], mac). */
export function signToken(secret: Buffer, target: TrackingTarget): string {
  const head = Buffer.alloc(HEADER);
  head[0] = VERSION;
  head[1] = KIND[target.kind];
  uuidBytes(target.emailId).copy(head, 2);
  const payload = target.kind === 'click' ? Buffer.concat([head, Buffer.from(target.url, 'utf8')]) : head;
  return sealToken(secret, payload);
}

/**
 * The target of a token this server signed, or undefined for anything else:
 * malformed, truncated, edited, or signed with another secret (lib/sealed-token.ts).
 */
export function verifyToken(secret: Buffer, token: string): TrackingTarget | undefined {
  const payload = openToken(secret, token, TRACKING_LIMITS.tokenChars, HEADER);
  if (!payload || payload[0] !== VERSION) return undefined;
  const emailId = uuidOf(payload.subarray(2, HEADER));
  if (!isUuid(emailId)) return undefined;
  if (payload[1] === KIND.open && payload.length === HEADER) return { kind: 'open', emailId };
  if (payload[1] === KIND.click && payload.length > HEADER) {
    return { kind: 'click', emailId, url: payload.subarray(HEADER).toString('utf8') };
  }
  return undefined;
}
