import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../lib/hmac.ts';
import { isUuid } from '../lib/ids.ts';
import { TRACKING_LIMITS } from './schema.ts';

/** What an unsubscribe token stands for: one recipient of one email of one project (RFC 8058). */
export interface UnsubscribeTarget {
  projectId: string;
  emailId: string;
  recipient: string;
}

const VERSION = 1;
// 'u': a click ('c') or open ('o') token signed with the same key can never pass for one of these.
const KIND = 0x75;
const HEADER = 2 + 16 + 16; // version, kind, project uuid, email uuid
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

const mac = (secret: Buffer, payload: Buffer) => hmacSha256(secret, payload).subarray(0, MAC_BYTES);
const uuidBytes = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex');
/** The uuid written in 16 raw bytes. */
export function uuidOf(raw: Buffer): string {
  const h = raw.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Signs `target` with the tracking key: base64url(version, 'u', project id, email id, recipient, mac). */
export function signUnsubscribeToken(secret: Buffer, t: UnsubscribeTarget): string {
  const head = Buffer.from([VERSION, KIND]);
  const payload = Buffer.concat([head, uuidBytes(t.projectId), uuidBytes(t.emailId), Buffer.from(t.recipient, 'utf8')]);
  return Buffer.concat([payload, mac(secret, payload)]).toString('base64url');
}

/**
 * The target of an unsubscribe token this server signed, or undefined for anything else
 * (malformed, edited, another kind of token, another secret). As verifyToken: constant-time
 * MAC comparison, canonical base64url only.
 */
export function verifyUnsubscribeToken(secret: Buffer, token: string): UnsubscribeTarget | undefined {
  if (token.length > TRACKING_LIMITS.tokenChars || !BASE64URL.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length <= HEADER + MAC_BYTES || raw.toString('base64url') !== token) return undefined;
  const payload = raw.subarray(0, raw.length - MAC_BYTES);
  if (!timingSafeEqual(mac(secret, payload), raw.subarray(raw.length - MAC_BYTES))) return undefined;
  if (payload[0] !== VERSION || payload[1] !== KIND) return undefined;
  const projectId = uuidOf(payload.subarray(2, 18));
  const emailId = uuidOf(payload.subarray(18, HEADER));
  if (!isUuid(projectId) || !isUuid(emailId)) return undefined;
  return { projectId, emailId, recipient: payload.subarray(HEADER).toString('utf8') };
}
