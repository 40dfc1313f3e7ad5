import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgIdempotency, type PgIdempotency } from '../src/idempotency/repo-pg.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// Idempotency-Key on PostgreSQL (issue 17, item 2): "two nodes, one key: one email". Each node
// runs the send's steps as the accept does: take the key, insert the email, save the response.

type Node = PgNode & { idem: PgIdempotency };
let a: Node;
let b: Node;
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await migratedPgDatabase('idempotency');
  drop = db.drop;
  const node = async (): Promise<Node> => {
    const n = await pgNode(db.url);
    return { ...n, idem: createPgIdempotency(n.pool) };
  };
  [a, b] = [await node(), await node()];
  await a.pool.query(
    `INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
     INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x')`,
  );
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

let n = 0;
/** A send with `key` on node `on`: its email id, and whether it replayed another send's. */
function send(
  on: Node,
  key: string,
  hash: string,
  now = '2026-11-26T12:00:00.000Z',
  expires = '2026-11-27T12:00:00.000Z',
) {
  const id = `e${++n}`;
  return on.tx.write(async (t) => {
    const prior = await on.idem.claim(t, 'p1', key, hash, now, expires);
    if (prior) return { replay: true, hash: prior.request_hash, ...(JSON.parse(prior.response) as { id: string }) };
    await t.query(
      `INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
       VALUES ($1, 'p1', 'TEST', 'SIMULATED', 'a@x.test', '[]', 's', $2)`,
      [id, now],
    );
    await on.idem.save(t, 'p1', key, { id }, id);
    return { replay: false, hash, id };
  });
}

const emails = async () => (await a.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM emails')).rows[0]!.n;

describe('Idempotency-Key on PostgreSQL, with two nodes', () => {
  it('makes one email of sends with one key on both nodes at once; the others replay its response', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_v, i) => send(i % 2 ? a : b, 'welcome-42', 'h1')));
    expect(results.filter((r) => !r.replay)).toHaveLength(1);
    const first = results.find((r) => !r.replay)!;
    expect(new Set(results.map((r) => r.id))).toEqual(new Set([first.id]));
    expect(await emails()).toBe(1);
    expect(await b.idem.find('p1', 'welcome-42', '2026-11-26T13:00:00.000Z')).toEqual({
      request_hash: 'h1',
      response: JSON.stringify({ id: first.id }),
    });
  });

  it('gives a reused key with another body the first send’s hash, so it can be refused; an expired key is new', async () => {
    const other = await send(b, 'welcome-42', 'h2');
    expect(other).toMatchObject({ replay: true, hash: 'h1' });
    const later = await send(a, 'welcome-42', 'h2', '2026-11-27T12:00:00.001Z', '2026-11-28T12:00:00.001Z');
    expect(later).toMatchObject({ replay: false, hash: 'h2' });
    expect(await emails()).toBe(2);
    expect(await a.idem.purgeExpired('2026-11-28T12:00:00.001Z')).toBe(1);
  });

  it('frees the key of a send that failed, for the next', async () => {
    await expect(
      a.tx.write(async (t) => {
        expect(
          await a.idem.claim(t, 'p1', 'k-fail', 'h', '2026-11-26T12:00:00.000Z', '2026-11-27T12:00:00.000Z'),
        ).toBeNull();
        throw new Error('refused after taking the key');
      }),
    ).rejects.toThrow('refused after taking the key');
    expect(await send(b, 'k-fail', 'h')).toMatchObject({ replay: false });
  });
});
