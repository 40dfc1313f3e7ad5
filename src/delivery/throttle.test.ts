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

  it('shares each limit among the nodes, never passing it together, and at least one slot each', () => {
    const started = (t: ReturnType<typeof createThrottle>) => {
      let n = 0;
      while (t.tryStart('a.example', 0)) n++;
      return n;
    };
    const nodes = [createThrottle(opts), createThrottle(opts), createThrottle(opts)];
    for (const t of nodes) t.shareAmong(3);
    // 8 among 3: 2 each, 6 together.
    expect(nodes.map(started)).toEqual([2, 2, 2]);
    const alone = createThrottle({ ...opts, maxConcurrency: 2 });
    alone.shareAmong(5);
    expect(started(alone)).toBe(1);
    // Back to one node: the whole limit.
    const one = createThrottle(opts);
    one.shareAmong(2);
    one.shareAmong(1);
    expect(started(one)).toBe(8);
  });

  it("adopts another node's slow-down: its lower limit and its later pause", () => {
    const t = createThrottle(opts);
    const first = { domain: 'a.example', concurrency: 4, paused_until: new Date(60_000).toISOString() };
    t.adopt({ ...first, updated_at: '2026-11-27T00:00:00.000Z' });
    expect(t.paused('a.example', 59_999)).toBe(true);
    expect(t.tryStart('a.example', 59_999)).toBe(false);
    expect(t.describe('a.example', 60_000)).toMatchObject({ concurrency: 4, paused_until: null });
    // A higher limit or an earlier pause changes nothing.
    t.slowDown('a.example', 70_000);
    t.adopt({
      domain: 'a.example',
      concurrency: 8,
      paused_until: new Date(80_000).toISOString(),
      updated_at: '2026-11-27T00:00:01.000Z',
    });
    expect(t.describe('a.example', 71_000)).toMatchObject({
      concurrency: 2,
      paused_until: new Date(100_000).toISOString(),
    });
  });

  it('adopts each recorded slow-down once, so this node wins its slots back by its own successes', () => {
    const t = createThrottle(opts);
    const row = { domain: 'a.example', concurrency: 4, paused_until: null, updated_at: '2026-11-27T00:00:00.000Z' };
    t.adopt(row);
    for (let i = 0; i < 2 * opts.recoverAfter; i++) t.succeeded('a.example');
    expect(t.describe('a.example', 0).concurrency).toBe(6);
    // The same row read again (every 2 s while it stands) does not pull the limit back down.
    t.adopt(row);
    expect(t.describe('a.example', 0).concurrency).toBe(6);
    // A newer slow-down does.
    t.adopt({ ...row, updated_at: '2026-11-27T00:01:00.000Z' });
    expect(t.describe('a.example', 0).concurrency).toBe(4);
  });
});
