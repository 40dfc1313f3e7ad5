import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signToken, verifyToken } from './token.ts';

const secret = randomBytes(32);
const emailId = '019a0b1c-2d3e-7f40-8a5b-6c7d8e9fa0b1';
const other = '019a0b1c-2d3e-7f40-8a5b-6c7d8e9fa0b2';
const url = 'https://example.com/pricing?utm_source=mail&x=ü#top';

/** The token with character `i` replaced by a different base64url character. */
function flip(token: string, i: number): string {
  const c = token[i] === 'A' ? 'B' : 'A';
  return token.slice(0, i) + c + token.slice(i + 1);
}

describe('tracking tokens', () => {
  it('round-trips a click and an open', () => {
    expect(verifyToken(secret, signToken(secret, { kind: 'click', emailId, url }))).toEqual({
      kind: 'click',
      emailId,
      url,
    });
    expect(verifyToken(secret, signToken(secret, { kind: 'open', emailId }))).toEqual({ kind: 'open', emailId });
  });

  it('is compact and URL-safe', () => {
    const open = signToken(secret, { kind: 'open', emailId });
    expect(open).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(open.length).toBeLessThanOrEqual(48);
  });

  it('is bound to its email: another email gets another token, and neither verifies as the other', () => {
    const a = signToken(secret, { kind: 'click', emailId, url });
    const b = signToken(secret, { kind: 'click', emailId: other, url });
    expect(a).not.toBe(b);
    expect(verifyToken(secret, b)).toEqual({ kind: 'click', emailId: other, url });
  });

  it.each(Array.from({ length: 12 }, (_, k) => k))('rejects an edit at position %i of the token', (k) => {
    const t = signToken(secret, { kind: 'click', emailId, url });
    const i = Math.floor((k * (t.length - 1)) / 11);
    expect(verifyToken(secret, flip(t, i))).toBeUndefined();
  });

  it('rejects a token whose URL was swapped for another (an open redirect attempt)', () => {
    const t = signToken(secret, { kind: 'click', emailId, url: 'https://example.com/a' });
    const raw = Buffer.from(t, 'base64url');
    const evil = Buffer.from('https://evil.test/a', 'utf8');
    const forged = Buffer.concat([raw.subarray(0, 18), evil, raw.subarray(raw.length - 16)]).toString('base64url');
    expect(verifyToken(secret, forged)).toBeUndefined();
  });

  it('rejects tokens signed with another secret, truncated, padded or non-canonical', () => {
    const t = signToken(secret, { kind: 'click', emailId, url });
    expect(verifyToken(randomBytes(32), t)).toBeUndefined();
    expect(verifyToken(secret, t.slice(0, -1))).toBeUndefined();
    expect(verifyToken(secret, t + 'A')).toBeUndefined();
    expect(verifyToken(secret, t + '=')).toBeUndefined();
    expect(verifyToken(secret, t.slice(0, 10) + '!' + t.slice(10))).toBeUndefined();
    expect(verifyToken(secret, '')).toBeUndefined();
    expect(verifyToken(secret, 'A'.repeat(5000))).toBeUndefined();
  });

  it('does not let an open token pass as a click or the reverse', () => {
    const open = Buffer.from(signToken(secret, { kind: 'open', emailId }), 'base64url');
    open[1] = 0x63; // 'c', MAC unchanged
    expect(verifyToken(secret, open.toString('base64url'))).toBeUndefined();
  });
});
