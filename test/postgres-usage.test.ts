import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.ts';
import { createPgUsage, type PgUsage } from '../src/limits/usage-pg.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// Monthly volume and the daily limit on PostgreSQL (issue 17, item 2): sends on two nodes at
// once never count past a ceiling together, and a refused send counts nothing.

type Node = PgNode & { usage: PgUsage };
let a: Node;
let b: Node;
let drop: () => Promise<void>;

const NOW = Date.parse('2026-11-26T12:00:00.000Z');

beforeAll(async () => {
  const db = await migratedPgDatabase('usage');
  drop = db.drop;
  const node = async (): Promise<Node> => {
    const n = await pgNode(db.url);
    return { ...n, usage: createPgUsage(n.pool) };
  };
  [a, b] = [await node(), await node()];
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

const send = (n: Node, org: string, units: number, limits: { monthly: number | null; daily: number | null }) =>
  n.tx.write((t) => n.usage.reserve(t, org, units, limits, NOW));

describe('volume counters on PostgreSQL, with two nodes', () => {
  it('lets concurrent sends on both nodes reach the monthly volume, and not one recipient past it', async () => {
    const limits = { monthly: 100, daily: null };
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_v, i) => send(i % 2 ? a : b, 'o1', 3, limits)),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    // 33 sends of 3 fit in 100; the 27 others are refused with the contract's error.
    expect(ok).toBe(33);
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(r.reason).toBeInstanceOf(AppError);
      expect(r.reason).toMatchObject({ code: 'monthly_volume_exceeded', details: { limit: 100, requested: 3 } });
    }
    expect(await a.usage.used('o1', '2026-11')).toBe(99);
    expect(await b.usage.used('o1', '2026-11-26')).toBe(99);
  });

  it('counts nothing for a send the daily limit refuses, the month included', async () => {
    const limits = { monthly: null, daily: 10 };
    await send(a, 'o2', 8, limits);
    await expect(send(b, 'o2', 3, limits)).rejects.toMatchObject({
      code: 'daily_limit_exceeded',
      details: { limit: 10, used: 8, requested: 3 },
    });
    expect(await a.usage.used('o2', '2026-11')).toBe(8);
    expect(await a.usage.used('o2', '2026-11-26')).toBe(8);
    // A send larger than the limit on its own is refused before it counts anything.
    await expect(send(a, 'o3', 11, limits)).rejects.toMatchObject({ code: 'daily_limit_exceeded' });
    expect(await a.usage.used('o3', '2026-11')).toBe(0);
  });
});
