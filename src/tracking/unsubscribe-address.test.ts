import { describe, expect, it } from 'vitest';
import { parseUnsubscribeAddress, recipientOfAddress, unsubscribeAddress } from './unsubscribe-address.ts';

const KEY = Buffer.alloc(32, 1);
const EMAIL = '0190a8b2-7c3d-7e4f-8a1b-2c3d4e5f6a7c';
const RECIPIENTS = ['ada@example.org', 'Bob@Example.org'];

describe('unsubscribe addresses', () => {
  it('fit the 64-octet local part and name their email and recipient', () => {
    const a = unsubscribeAddress(KEY, EMAIL, 'bob@example.org', 'Sender.test');
    expect(a).toMatch(/^unsubscribe\+0190a8b27c3d7e4f8a1b2c3d4e5f6a7c-[0-9a-f]{16}@bounces\.sender\.test$/);
    expect(a.split('@')[0]!.length).toBeLessThanOrEqual(64);
    const parsed = parseUnsubscribeAddress(a.toUpperCase())!;
    expect(parsed).toMatchObject({ emailId: EMAIL, fromDomain: 'sender.test' });
    expect(recipientOfAddress(KEY, parsed, RECIPIENTS)).toBe('Bob@Example.org');
  });

  it('verify for no recipient with another key, another email or an edited tag', () => {
    const a = parseUnsubscribeAddress(unsubscribeAddress(KEY, EMAIL, 'ada@example.org', 'sender.test'))!;
    expect(recipientOfAddress(Buffer.alloc(32, 2), a, RECIPIENTS)).toBeUndefined();
    expect(recipientOfAddress(KEY, { ...a, emailId: EMAIL.replace(/c$/, 'd') }, RECIPIENTS)).toBeUndefined();
    expect(
      recipientOfAddress(KEY, { ...a, tag: a.tag.replace(/^./, (c) => (c === '0' ? '1' : '0')) }, RECIPIENTS),
    ).toBeUndefined();
  });

  it('are not return paths, and return paths are not them', () => {
    for (const bad of [
      'bounces+0190a8b27c3d7e4f8a1b2c3d4e5f6a7c-0123456789ab@bounces.sender.test',
      'unsubscribe+0190a8b27c3d7e4f8a1b2c3d4e5f6a7c-0123456789ab@bounces.sender.test',
      'unsubscribe+0190a8b27c3d7e4f8a1b2c3d4e5f6a7c-0123456789abcdef@sender.test',
      'unsubscribe+0190a8b27c3d7e4f8a1b2c3d4e5f6a7c-0123456789abcdef',
    ]) {
      expect(parseUnsubscribeAddress(bad)).toBeNull();
    }
  });
});
