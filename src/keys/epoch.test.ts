import { describe, expect, it } from 'vitest';
import { confirmed, confirmedNow } from './epoch.ts';

describe('the auth epoch of a kept key', () => {
  const at = (values: number[]) => {
    let reads = 0;
    return {
      check: { epoch: 4, verified: false, read: () => values[Math.min(reads++, values.length - 1)]! },
      reads: () => reads,
    };
  };

  it('confirmed: reads once, and keeps what it found unchanged', () => {
    const { check, reads } = at([4, 5]);
    expect(confirmed(check)).toBe(true);
    expect(confirmed(check)).toBe(true);
    expect(reads()).toBe(1);
  });

  it('confirmed: reads again while the epoch is found moved', () => {
    const { check, reads } = at([5, 5]);
    expect(confirmed(check)).toBe(false);
    expect(confirmed(check)).toBe(false);
    expect(reads()).toBe(2);
  });

  it('confirmedNow: reads every time, so a transaction run again sees a revocation made in between', () => {
    const { check, reads } = at([4, 5]);
    expect(confirmedNow(check)).toBe(true);
    expect(confirmedNow(check)).toBe(false);
    expect(check.verified).toBe(false);
    expect(reads()).toBe(2);
  });
});
