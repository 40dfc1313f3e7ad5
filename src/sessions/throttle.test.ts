import { describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.ts';
import { createFailureWindows, type FailureWindows } from '../lib/failure-windows.ts';
import { clientBlock, createLoginThrottle, LOGIN_LIMITS } from './throttle.ts';

describe('clientBlock', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:0:0:1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s is counted as %s', (ip, block) => {
    expect(clientBlock(ip)).toBe(block);
  });
});

describe('the login throttle', () => {
  /** In-memory windows that count the reads of each key (each is a round trip on PostgreSQL). */
  const counted = () => {
    const clock = new FakeClock('2026-11-27T12:00:00.000Z');
    const inner = createFailureWindows(clock, LOGIN_LIMITS.windowMs);
    const reads = new Map<string, number>();
    const read = (key: string) => reads.set(key, (reads.get(key) ?? 0) + 1);
    const windows: FailureWindows = {
      ...inner,
      waitMs: (key, limit) => (read(key), inner.waitMs(key, limit)),
      window: (key) => (read(key), inner.window(key)),
    };
    return { clock, reads, throttle: createLoginThrottle(windows) };
  };

  it('reads each window once per login', async () => {
    const { reads, throttle } = counted();
    await throttle.recordFailure('owner@example.com', '203.0.113.1');
    await throttle.retryAfter('owner@example.com', '203.0.113.1');
    expect([...reads.values()]).toEqual([1, 1, 1]);
  });

  it('brakes an attacked address by doubling waits from the IP’s own failures, never past the window', async () => {
    const { clock, throttle } = counted();
    for (let i = 0; i < LOGIN_LIMITS.perAddress; i++) await throttle.recordFailure('v@example.com', `198.51.100.${i}`);
    const ip = '198.51.100.0';
    const waits: number[] = [];
    for (let n = 1; n <= 8; n++) {
      const wait = await throttle.retryAfter('v@example.com', ip);
      waits.push(wait);
      clock.advance(wait * 1000);
      expect(await throttle.retryAfter('v@example.com', ip)).toBe(0);
      await throttle.recordFailure('v@example.com', ip);
    }
    // The eighth is cut at 900 s, where the windows end.
    expect(waits).toEqual([5, 10, 20, 40, 80, 160, 320, 265]);
  });
});
