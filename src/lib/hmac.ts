import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/**
 * HMAC-SHA256 under a key that is used again and again (a server secret, a webhook's secret).
 *
 * `createHmac` given a raw key (a Buffer or a string) makes a KeyObject of it on every call:
 * ~33 µs a MAC on this machine, against ~5 µs when it is given a KeyObject (docs/performance.md,
 * issue 36). Delivery makes one per recipient (its return path), tracking one per link. So each
 * key is made a KeyObject once and kept: a Buffer secret for as long as the Buffer lives (the
 * server's secrets are kept in memory, store/secrets.ts), a string secret in a small table.
 */
const byBuffer = new WeakMap<Buffer, KeyObject>();
const byString = new Map<string, KeyObject>();
/** Past this many string keys the table starts again: a bound, not a working set (a few webhooks). */
const STRING_KEYS = 256;

function keyObjectOf(key: Buffer | string): KeyObject {
  if (typeof key === 'string') {
    let k = byString.get(key);
    if (!k) {
      if (byString.size >= STRING_KEYS) byString.clear();
      byString.set(key, (k = createSecretKey(key, 'utf8')));
    }
    return k;
  }
  let k = byBuffer.get(key);
  if (!k) byBuffer.set(key, (k = createSecretKey(key)));
  return k;
}

/** HMAC-SHA256 of `data` under `key` (a string key is its UTF-8 bytes, as createHmac takes it). */
export function hmacSha256(key: Buffer | string, data: string | Buffer): Buffer {
  return createHmac('sha256', keyObjectOf(key)).update(data).digest();
}
