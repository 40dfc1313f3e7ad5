import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uuidBytes, uuidOf } from './ids.ts';
import { openToken, sealToken, TOKEN_MAC_BYTES } from './sealed-token.ts';

const key = Buffer.from('k'.repeat(32));
const payload = Buffer.from('the payload');

describe('sealed tokens', () => {
  it('carry the payload and the first 128 bits of its HMAC-SHA256 (checked with node:crypto directly)', () => {
    const raw = Buffer.from(sealToken(key, payload), 'base64url');
    const mac = createHmac('sha256', key).update(payload).digest().subarray(0, 16);
    expect(TOKEN_MAC_BYTES).toBe(16);
    expect(raw).toEqual(Buffer.concat([payload, mac]));
    expect(openToken(key, sealToken(key, payload), 200, payload.length)).toEqual(payload);
  });

  it('open to nothing when edited, signed with another key, too long, too short or not canonical', () => {
    const token = sealToken(key, payload);
    const edited = (token[0] === 'A' ? 'B' : 'A') + token.slice(1);
    expect(openToken(key, edited, 200, 0)).toBeUndefined();
    expect(openToken(Buffer.from('x'.repeat(32)), token, 200, 0)).toBeUndefined();
    expect(openToken(key, token, token.length - 1, 0)).toBeUndefined();
    expect(openToken(key, token, 200, payload.length + 1)).toBeUndefined();
    // Node's decoder would skip the stray character: one token, two spellings.
    expect(openToken(key, `${token.slice(0, 4)}=${token.slice(4)}`, 200, 0)).toBeUndefined();
    expect(openToken(key, `${token}A`, 200, 0)).toBeUndefined();
  });

  it('write uuids as 16 bytes and read them back from bytes or hex', () => {
    const id = '0192e0a0-1234-7abc-8def-0123456789ab';
    expect(uuidBytes(id)).toHaveLength(16);
    expect(uuidOf(uuidBytes(id))).toBe(id);
    expect(uuidOf(id.replaceAll('-', ''))).toBe(id);
  });
});
