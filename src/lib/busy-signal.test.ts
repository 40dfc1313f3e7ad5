import { describe, expect, it } from 'vitest';
import { createBusySignal, readBusySignal } from './busy-signal.ts';
import { sleep } from './sleep.ts';

describe('busy signal', () => {
  it('reads busy after the owner kept its loop running, and free after it waited', async () => {
    const signal = createBusySignal(50);
    const busy = readBusySignal(signal.buffer, 0.8);
    signal.start();
    try {
      expect(busy()).toBe(false);
      const until = performance.now() + 120;
      while (performance.now() < until) {
        // The loop is held here: a busy interval.
      }
      // The sample due during the loop is taken as soon as the loop lets go.
      await sleep(5);
      expect(busy()).toBe(true);
      await sleep(120);
      expect(busy()).toBe(false);
    } finally {
      signal.stop();
    }
  });
});
