import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/lib/clock.ts';
import { createPgRateLimiter } from '../src/limits/rate-pg.ts';
import { createPgFailureWindows } from '../src/limits/failure-windows-pg.ts';
import { createLoginThrottle, LOGIN_LIMITS } from '../src/sessions/throttle.ts';
import { twoPgNodes, type PgNode } from './postgres/db.ts';

// The per-key request rate on PostgreSQL (issue 17, item 2): requests for one key on two nodes
// at once share one window, so the key gets its rate once, not once per node. So do failed
// logins and failed SMTP AUTH: a guesser gets the limit once, whichever node it reaches.

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

describe('failed logins on PostgreSQL, with two nodes', () => {
  const throttles = (clock: FakeClock, name = 'login') =>
    [a, b].map((n) =>
      createLoginThrottle(createPgFailureWindows(n.pool, clock, name, LOGIN_LIMITS.windowMs), LOGIN_LIMITS),
    );

  it('counts the failures of both nodes against one address and IP, and a success on either clears them', async () => {
    const clock = new FakeClock('2026-11-26T12:00:00.000Z');
    const [ta, tb] = throttles(clock);
    // Ten failures, taken in turn by the two nodes: each alone saw five, below the limit of ten.
    for (let i = 0; i < 10; i++) await [ta, tb][i % 2]!.recordFailure('Victim@example.com', '203.0.113.9');
    expect(await ta!.retryAfter('victim@example.com', '203.0.113.9')).toBe(15 * 60);
    expect(await tb!.retryAfter('victim@example.com', '203.0.113.9')).toBe(15 * 60);
    // The address is not locked: another IP, and another address from the same IP, are free.
    expect(await tb!.retryAfter('victim@example.com', '198.51.100.1')).toBe(0);
    expect(await tb!.retryAfter('other@example.com', '203.0.113.9')).toBe(0);
    clock.advance(5 * 60_000);
    expect(await ta!.retryAfter('victim@example.com', '203.0.113.9')).toBe(10 * 60);
    await tb!.recordSuccess('victim@example.com', '203.0.113.9');
    expect(await ta!.retryAfter('victim@example.com', '203.0.113.9')).toBe(0);
  });

  it('brakes an address guessed from many IPs on both nodes, for the IPs that failed only', async () => {
    const clock = new FakeClock('2026-11-26T12:30:00.000Z');
    const [ta, tb] = throttles(clock, 'brake');
    const ips = Array.from({ length: LOGIN_LIMITS.perAddress }, (_v, i) => `198.51.100.${i + 1}`);
    for (const [i, ip] of ips.entries()) await [ta, tb][i % 2]!.recordFailure('victim@example.com', ip);
    // A slowdown, not a lock: one failure, 5 s; a second on the other node doubles it.
    expect(await ta!.retryAfter('victim@example.com', ips[1]!)).toBe(5);
    expect(await tb!.retryAfter('victim@example.com', ips[0]!)).toBe(5);
    expect(await ta!.retryAfter('victim@example.com', '203.0.113.50')).toBe(0);
    clock.advance(5_000);
    expect(await ta!.retryAfter('victim@example.com', ips[0]!)).toBe(0);
    await ta!.recordFailure('victim@example.com', ips[0]!);
    expect(await tb!.retryAfter('victim@example.com', ips[0]!)).toBe(10);
  });

  it('loses no failure of many at once, and starts a new window once the last has passed', async () => {
    const clock = new FakeClock('2026-11-26T13:00:00.000Z');
    const [ta, tb] = throttles(clock, 'burst');
    await Promise.all(
      Array.from({ length: 30 }, (_v, i) => [ta, tb][i % 2]!.recordFailure(`u${i}@example.com`, '192.0.2.7')),
    );
    // The IP's limit is 30: all 30 counted, though they came at once on two nodes.
    expect(await ta!.retryAfter('new@example.com', '192.0.2.7')).toBe(15 * 60);
    clock.advance(15 * 60_000);
    expect(await tb!.retryAfter('new@example.com', '192.0.2.7')).toBe(0);
    await ta!.recordFailure('new@example.com', '192.0.2.7');
    const [row] = (await a.pool.query("SELECT failures FROM failure_windows WHERE key = 'burst:ip:192.0.2.7'")).rows;
    expect(row).toEqual({ failures: 1 });
  });
});
