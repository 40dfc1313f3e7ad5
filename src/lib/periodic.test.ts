import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.ts';
import { notOverlapping } from './periodic.ts';

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
