import { describe, expect, it } from 'vitest';
import { createByteBudget } from './byte-budget.ts';

describe('createByteBudget', () => {
  it('refuses a hold that would pass the limit, and takes it once bytes are given back', () => {
    const budget = createByteBudget(100);
    const a = budget.take(60)!;
    expect(budget.take(50)).toBeUndefined();
    const b = budget.take(40)!;
    expect(budget.stats()).toEqual({ inFlight: 100, limit: 100, refused: 1 });
    a.release();
    a.release();
    expect(budget.take(50)).toBeDefined();
    b.release();
    expect(budget.stats().inFlight).toBe(50);
  });

  it('grows a hold as bytes arrive, up to the limit', () => {
    const budget = createByteBudget(100);
    const other = budget.take(30)!;
    const hold = budget.take(0)!;
    expect(hold.cover(50)).toBe(true);
    expect(hold.cover(40)).toBe(true);
    expect(budget.stats().inFlight).toBe(80);
    expect(hold.cover(71)).toBe(false);
    expect(budget.stats().inFlight).toBe(80);
    other.release();
    expect(hold.cover(71)).toBe(true);
    hold.release();
    expect(hold.cover(10)).toBe(false);
    expect(budget.stats().inFlight).toBe(0);
  });

  it('lets a request larger than the whole budget go alone, never beside another', () => {
    const budget = createByteBudget(100);
    const big = budget.take(500)!;
    expect(big).toBeDefined();
    expect(budget.take(1)).toBeUndefined();
    expect(big.cover(600)).toBe(true);
    big.release();
    const small = budget.take(10)!;
    expect(budget.take(500)).toBeUndefined();
    const growing = budget.take(0)!;
    expect(growing.cover(200)).toBe(false);
    small.release();
    expect(growing.cover(200)).toBe(true);
  });

  it('holds 0 for a size that is not a positive whole number (a client SIZE)', () => {
    const budget = createByteBudget(100);
    for (const size of [Number.NaN, -5, 1.5, Number('x'), 2 ** 60]) budget.take(size)!.release();
    budget.take(Number.NaN);
    budget.take(-5);
    expect(budget.stats()).toEqual({ inFlight: 0, limit: 100, refused: 0 });
  });
});
