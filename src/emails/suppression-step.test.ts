import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import type { NewEmail, Recipient } from './store.ts';
import { dropSuppressed } from './suppression-step.ts';

const email = (): NewEmail =>
  ({ to: ['Ada@Example.org', 'bob@example.org'], cc: ['cy@example.org'], bcc: null }) as unknown as NewEmail;
const recipients = (e: NewEmail): Recipient[] =>
  [...e.to, ...(e.cc ?? [])].map((address) => ({ address }) as unknown as Recipient);

describe('the suppression step of an accept', () => {
  it('drops a suppressed address whatever its case, from the recipients and from to/cc/bcc', () => {
    const e = email();
    const listed = new Map([['ada@example.org', 'HARD_BOUNCE']]);
    const { kept, skipped } = dropSuppressed(e, recipients(e), (a) => listed.get(a));
    expect(kept.map((r) => r.address)).toEqual(['bob@example.org', 'cy@example.org']);
    expect(skipped).toEqual([{ email: 'Ada@Example.org', reason: 'HARD_BOUNCE' }]);
    expect([e.to, e.cc, e.bcc]).toEqual([['bob@example.org'], ['cy@example.org'], null]);
  });

  it('leaves the email as it was when nobody is listed', () => {
    const e = email();
    expect(dropSuppressed(e, recipients(e), () => undefined).skipped).toEqual([]);
    expect(e.to).toEqual(['Ada@Example.org', 'bob@example.org']);
  });

  it('refuses the send when every recipient is listed, naming them all', () => {
    const e = email();
    const refusal = (() => {
      try {
        dropSuppressed(e, recipients(e), () => 'COMPLAINT');
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe('all_recipients_suppressed');
  });
});
