import { describe, expect, it } from 'vitest';
import { signToken } from './token.ts';
import { signUnsubscribeToken, verifyUnsubscribeToken } from './unsubscribe-token.ts';

const KEY = Buffer.alloc(32, 1);
const TARGET = {
  projectId: '0190a8b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b',
  emailId: '0190a8b2-7c3d-7e4f-8a1b-2c3d4e5f6a7c',
  recipient: 'ada@example.org',
};

describe('unsubscribe tokens', () => {
  it('carry the project, the email and the recipient', () => {
    expect(verifyUnsubscribeToken(KEY, signUnsubscribeToken(KEY, TARGET))).toEqual(TARGET);
  });

  it('are refused when signed with another key, edited, cut or not base64url', () => {
    const token = signUnsubscribeToken(KEY, TARGET);
    const edited = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
    for (const bad of [
      signUnsubscribeToken(Buffer.alloc(32, 2), TARGET),
      edited,
      token.slice(0, -1),
      `${token}=`,
      '',
    ]) {
      expect(verifyUnsubscribeToken(KEY, bad)).toBeUndefined();
    }
  });

  it('never accept a click or open token signed with the same key', () => {
    const click = signToken(KEY, { kind: 'click', emailId: TARGET.emailId, url: `x${'a'.repeat(40)}` });
    const open = signToken(KEY, { kind: 'open', emailId: TARGET.emailId });
    expect(verifyUnsubscribeToken(KEY, click)).toBeUndefined();
    expect(verifyUnsubscribeToken(KEY, open)).toBeUndefined();
  });
});
