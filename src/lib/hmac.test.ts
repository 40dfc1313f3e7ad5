import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256 } from './hmac.ts';

const reference = (key: Buffer | string, data: string | Buffer) => createHmac('sha256', key).update(data).digest();

describe('hmacSha256', () => {
  it('is HMAC-SHA256 under a Buffer key, the same on every call, and another for another key', () => {
    const a = randomBytes(32);
    const b = Buffer.from(a);
    b[0]! ^= 1;
    for (let i = 0; i < 3; i++) {
      expect(hmacSha256(a, `id|user${i}@example.com`)).toEqual(reference(a, `id|user${i}@example.com`));
      expect(hmacSha256(b, `id|user${i}@example.com`)).toEqual(reference(b, `id|user${i}@example.com`));
    }
    expect(hmacSha256(a, Buffer.from('payload'))).toEqual(reference(a, Buffer.from('payload')));
    expect(hmacSha256(a, 'x')).not.toEqual(hmacSha256(b, 'x'));
    expect(hmacSha256(Buffer.alloc(0), 'x')).toEqual(reference(Buffer.alloc(0), 'x'));
  });

  it('takes a string key as its UTF-8 bytes, as createHmac does, past its table of kept keys too', () => {
    expect(hmacSha256('whsec_é', '1.{}')).toEqual(reference('whsec_é', '1.{}'));
    for (let i = 0; i < 600; i++) {
      const key = `whsec_${i}`;
      expect(hmacSha256(key, `${i}.body`)).toEqual(reference(key, `${i}.body`));
    }
    expect(hmacSha256('whsec_0', '0.body')).toEqual(reference('whsec_0', '0.body'));
  });
});
