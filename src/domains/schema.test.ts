import { describe, expect, it } from 'vitest';
import { domainNameSchema } from './schema.ts';

describe('domain name', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Mail.Example.COM ', 'mail.example.com'],
    ['a-b.co.uk', 'a-b.co.uk'],
    ['a--b.example', 'a--b.example'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['bücher.example', 'xn--bcher-kva.example'],
    [`${'a'.repeat(63)}.com`, `${'a'.repeat(63)}.com`],
    [`${'abcdefghi.'.repeat(25)}com`, `${'abcdefghi.'.repeat(25)}com`],
  ])('accepts %j as %j', (input, name) => {
    expect(domainNameSchema.parse(input)).toBe(name);
  });

  it.each([
    ['', 'empty'],
    ['localhost', 'two labels'],
    ['example.com.', 'empty label'],
    ['exa mple.com', 'letters, digits'],
    ['-example.com', 'letters, digits'],
    ['example-.com', 'letters, digits'],
    ['ex_ample.com', 'letters, digits'],
    ['a..com', 'empty label'],
    [`${'a'.repeat(64)}.com`, 'longer than 63'],
    [`${'abcdefghi.'.repeat(26)}com`, 'at most 253'],
    ['ab--cd.example', 'reserved for IDNA'],
    ['xn--zz.example', 'invalid punycode'],
    ['192.168.0.1', 'numeric'],
    ['user@example.com', 'letters, digits'],
  ])('refuses %j (%s)', (input, why) => {
    const r = domainNameSchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toContain(why);
  });
});
