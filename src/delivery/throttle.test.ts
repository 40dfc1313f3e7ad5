import { describe, expect, it } from 'vitest';
import { createThrottle } from './throttle.ts';

const opts = { maxConcurrency: 8, basePauseMs: 30_000, maxPauseMs: 600_000, recoverAfter: 3 };

describe('per-destination throttle', () => {
  it('limits concurrency per destination', () => {
    const t = createThrottle({ ...opts, maxConcurrency: 2 });
    expect(t.tryStart('a.example', 0)).toBe(true);
    expect(t.tryStart('a.example', 0)).toBe(true);
    expect(t.tryStart('a.example', 0)).toBe(false);
    expect(t.tryStart('b.example', 0)).toBe(true);
    t.finished('a.example');
    expect(t.tryStart('a.example', 0)).toBe(true);
    expect(t.tryStart('a.example', 0)).toBe(false);
  });

  it('halves and pauses a destination that says slow down, leaving others alone', () => {
    const t = createThrottle(opts);
    t.slowDown('a.example', 1000);
    expect(t.tryStart('a.example', 1000 + 29_999)).toBe(false);
    expect(t.tryStart('a.example', 1000 + 30_000)).toBe(true);
    t.finished('a.example');
    expect(t.describe('a.example', 1000)).toMatchObject({ throttled: true, concurrency: 4 });
    expect(t.describe('b.example', 1000)).toMatchObject({ throttled: false, concurrency: 8 });
    t.slowDown('a.example', 40_000);
    expect(t.describe('a.example', 40_000)).toMatchObject({
      concurrency: 2,
      paused_until: new Date(100_000).toISOString(),
    });
  });

  it('recovers one slot per run of successes, up to the maximum', () => {
    const t = createThrottle(opts);
    t.slowDown('a.example', 0);
    for (let i = 0; i < 3; i++) t.succeeded('a.example');
    expect(t.describe('a.example', 10 ** 9).concurrency).toBe(5);
    for (let i = 0; i < 30; i++) t.succeeded('a.example');
    expect(t.describe('a.example', 10 ** 9)).toMatchObject({ concurrency: 8, throttled: false });
  });
});
