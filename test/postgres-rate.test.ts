import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/lib/clock.ts';
import { createPgRateLimiter } from '../src/limits/rate-pg.ts';
import { twoPgNodes, type PgNode } from './postgres/db.ts';

// The per-key request rate on PostgreSQL (issue 17, item 2): requests for one key on two nodes
// at once share one window, so the key gets its rate once, not once per node.

let a: PgNode;
let b: PgNode;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ a, b, close } = await twoPgNodes('rate'));
});
afterAll(() => close?.());

describe('the per-key rate on PostgreSQL, with two nodes', () => {
  it('allows the limit per second across both nodes, and the next second starts again', async () => {
    const clock = new FakeClock('2026-11-26T12:00:00.250Z');
    const limiters = [createPgRateLimiter(a.pool, clock), createPgRateLimiter(b.pool, clock)];
    const burst = () => Promise.all(Array.from({ length: 24 }, (_v, i) => limiters[i % 2]!.hit('key-1', 10)));
    const first = await burst();
    expect(first.filter((r) => r.allowed)).toHaveLength(10);
    // Each answer says what is left of the window and when it resets (0.75 s: 1 s rounded up).
    expect(
      first
        .filter((r) => r.allowed)
        .map((r) => r.remaining)
        .sort((x, y) => x - y),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(first.every((r) => r.reset === 1 && r.limit === 10)).toBe(true);
    // Another key has its own window.
    expect((await limiters[1]!.hit('key-2', 10)).allowed).toBe(true);
    clock.advance(1000);
    expect((await burst()).filter((r) => r.allowed)).toHaveLength(10);
  });
});
