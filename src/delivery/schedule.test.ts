import { describe, expect, it } from 'vitest';
import { nextAttemptAt } from './schedule.ts';

const M = 60_000;
const H = 60 * M;
const SCHEDULE = [1 * M, 5 * M, 15 * M, 30 * M, 1 * H, 2 * H, 4 * H];
const T0 = Date.parse('2026-03-01T00:00:00Z');

describe('nextAttemptAt', () => {
  it.each([
    [1, 1 * M],
    [2, 5 * M],
    [3, 15 * M],
    [4, 30 * M],
    [5, 1 * H],
    [6, 2 * H],
    [7, 4 * H],
    [8, 4 * H],
    [20, 4 * H],
  ])('after attempt %i waits %i ms', (attempts, delay) => {
    expect(nextAttemptAt(attempts, T0, T0 + 10 * M, SCHEDULE, 72 * H)).toBe(T0 + 10 * M + delay);
  });

  it('gives up once the next attempt would pass the maximum age', () => {
    expect(nextAttemptAt(9, T0, T0 + 68 * H, SCHEDULE, 72 * H)).toBe(T0 + 72 * H);
    expect(nextAttemptAt(9, T0, T0 + 68 * H + 1, SCHEDULE, 72 * H)).toBeNull();
  });

  it('gives up at once with an empty schedule', () => {
    expect(nextAttemptAt(1, T0, T0, [], 72 * H)).toBeNull();
  });
});
