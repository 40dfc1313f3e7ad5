import { hash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';
import { v7 } from 'uuid';

// Random bytes are drawn 4 KiB at a time: one getRandomValues per id cost 4–9 µs per email.
const POOL = new Uint8Array(4096);
let offset = POOL.length;

function random16(): Uint8Array {
  if (offset + 16 > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += 16;
  return POOL.subarray(offset - 16, offset);
}

/** Time-ordered UUIDv7: ids sort by creation, which keeps indexes compact. */
export function newId(nowMs: number): string {
  return v7({ msecs: nowMs, random: random16() });
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** A uuid's 16 bytes. */
export const uuidBytes = (id: string): Buffer => Buffer.from(id.replaceAll('-', ''), 'hex');

/** The uuid written as its 32 hex digits (or 16 raw bytes), with its dashes. */
export function uuidOf(hexOrBytes: string | Buffer): string {
  const h = typeof hexOrBytes === 'string' ? hexOrBytes : hexOrBytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A url-safe random token of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(s: string | Buffer): string {
  return hash('sha256', s, 'hex');
}

export function safeEqualHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
