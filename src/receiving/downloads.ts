import { timingSafeEqual } from 'node:crypto';
import { isUuid } from '../lib/ids.ts';
import { tokenMac as mac } from '../lib/sealed-token.ts';

/** What a download link names: a received message as received (index null), or one of its attachments. */
export interface DownloadTarget {
  id: string;
  index: number | null;
}

const TOKEN = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * A link's token: base64url of "id.index.expires" (index `raw` for the message) and its MAC
 * (128 bits of HMAC-SHA256, as the tracking links),
 * so a webhook's receiver downloads without a key until `expiresS` (Unix seconds).
 */
export function downloadToken(key: Buffer, t: DownloadTarget, expiresS: number): string {
  const body = `${t.id}.${t.index ?? 'raw'}.${expiresS}`;
  return `${Buffer.from(body).toString('base64url')}.${mac(key, body).toString('base64url')}`;
}

/** The target of a token this server made and that has not expired at `nowMs`; undefined for any other. */
export function readDownloadToken(key: Buffer, token: string, nowMs: number): DownloadTarget | undefined {
  const [b, m, extra] = token.split('.');
  if (extra !== undefined || !b || !m || !TOKEN.test(b) || !TOKEN.test(m)) return undefined;
  const body = Buffer.from(b, 'base64url').toString();
  if (Buffer.from(body).toString('base64url') !== b) return undefined;
  const given = Buffer.from(m, 'base64url');
  const want = mac(key, body);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
  const [id, index, expires] = body.split('.');
  if (!id || !isUuid(id) || !/^(raw|\d{1,4})$/.test(index ?? '') || !/^\d{1,12}$/.test(expires ?? '')) return undefined;
  if (Number(expires) * 1000 <= nowMs) return undefined;
  return { id, index: index === 'raw' ? null : Number(index) };
}
