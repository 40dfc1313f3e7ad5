import { describe, expect, it } from 'vitest';
import { deliveryThreads } from './app-options.ts';

describe('deliveryThreads', () => {
  it('leaves one core to the main thread and keeps 16 transactions in flight per CPU', () => {
    expect(deliveryThreads({ workers: undefined }, 1)).toEqual({ threads: 1, perThread: 16 });
    expect(deliveryThreads({ workers: undefined }, 2)).toEqual({ threads: 1, perThread: 32 });
    expect(deliveryThreads({ workers: undefined }, 4)).toEqual({ threads: 3, perThread: 22 });
    expect(deliveryThreads({ workers: undefined }, 0)).toEqual({ threads: 1, perThread: 16 });
  });

  it('takes --workers as given, 16 in flight each', () => {
    expect(deliveryThreads({ workers: 2 }, 2)).toEqual({ threads: 2, perThread: 16 });
    expect(deliveryThreads({ workers: 1 }, 8)).toEqual({ threads: 1, perThread: 16 });
  });
});
