import { isUuid, uuidBytes, uuidOf } from '../lib/ids.ts';
import { openToken, sealToken } from '../lib/sealed-token.ts';
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

/** Signs `target` with the tracking key: base64url(version, 'u', project id, email id, recipient, mac). */
export function signUnsubscribeToken(secret: Buffer, t: UnsubscribeTarget): string {
  const head = Buffer.from([VERSION, KIND]);
  const payload = Buffer.concat([head, uuidBytes(t.projectId), uuidBytes(t.emailId), Buffer.from(t.recipient, 'utf8')]);
  return sealToken(secret, payload);
}

/**
 * The target of an unsubscribe token this server signed, or undefined for anything else
 * (malformed, edited, another kind of token, another secret; lib/sealed-token.ts). The
 * recipient takes at least one byte.
 */
export function verifyUnsubscribeToken(secret: Buffer, token: string): UnsubscribeTarget | undefined {
  const payload = openToken(secret, token, TRACKING_LIMITS.tokenChars, HEADER + 1);
  if (!payload || payload[0] !== VERSION || payload[1] !== KIND) return undefined;
  const projectId = uuidOf(payload.subarray(2, 18));
  const emailId = uuidOf(payload.subarray(18, HEADER));
  if (!isUuid(projectId) || !isUuid(emailId)) return undefined;
  return { projectId, emailId, recipient: payload.subarray(HEADER).toString('utf8') };
}
