import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from './clock.ts';
import { coalesced, notOverlapping } from './periodic.ts';

describe('notOverlapping', () => {
  it('drops the calls that come while a run is going, and runs again once it has ended', async () => {
    const clock = new FakeClock();
    let runs = 0;
    let finish: () => void = () => {};
    const timer = clock.setInterval(
      notOverlapping(() => {
        runs++;
        return new Promise<void>((r) => (finish = r));
      }),
      3_600_000,
    );
    // Ten years of an hourly timer while the first run hangs: one run, not 87,600.
    clock.advance(10 * 365 * 86_400_000);
    expect(runs).toBe(1);
    finish();
    await new Promise((r) => setImmediate(r));
    clock.advance(3_600_000);
    expect(runs).toBe(2);
    timer.cancel();
  });
});

describe('coalesced', () => {
  it('runs the first call at once and the calls of the gap after it once, at its end', () => {
    vi.useFakeTimers();
    try {
      let runs = 0;
      const c = coalesced(() => runs++, 10);
      c.call();
      expect(runs).toBe(1);
      for (let i = 0; i < 1000; i++) c.call();
      expect(runs).toBe(1);
      vi.advanceTimersByTime(10);
      expect(runs).toBe(2); // the gap's calls, once; a new gap starts with it
      vi.advanceTimersByTime(10);
      expect(runs).toBe(2); // nothing came in that gap
      vi.advanceTimersByTime(100);
      c.call();
      expect(runs).toBe(3); // after a quiet spell: at once
      c.call();
      c.cancel();
      vi.advanceTimersByTime(100);
      expect(runs).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
