import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPostgres, type PgPool } from '../src/store/pg.ts';
import { createPgCommitter, type PgCommitter, type PgCommitterOptions, type PgTx } from '../src/store/pg-committer.ts';
import { freshPgDatabase } from './postgres/db.ts';

// Group commit on PostgreSQL (issue 17, item 3): a write is answered only after its group's
// COMMIT; a failing item undoes only its own writes; groups that deadlock are run again.

let pool: PgPool;
let other: PgPool;
let drop: () => Promise<void>;
let committer: PgCommitter;
const commits: number[] = [];
let retried = 0;

beforeAll(async () => {
  const db = await freshPgDatabase('committer');
  drop = db.drop;
  pool = await openPostgres(db.url);
  other = await openPostgres(db.url);
  await pool.query('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
});
afterAll(async () => {
  await pool?.end();
  await other?.end();
  await drop?.();
});

function start(o: Partial<PgCommitterOptions> = {}): PgCommitter {
  commits.length = 0;
  retried = 0;
  committer = createPgCommitter(pool, {
    windowMs: 2,
    maxBatch: 500,
    onCommit: (_s, writes) => commits.push(writes),
    onRetry: () => retried++,
    ...o,
  });
  return committer;
}

beforeEach(async () => {
  await pool.query('TRUNCATE t');
});
afterEach(async () => {
  await committer?.close();
});

const visible = async (id: number) => (await other.query('SELECT 1 FROM t WHERE id = $1', [id])).rowCount === 1;

describe('the PostgreSQL group commit', () => {
  it('commits concurrent writes in a few groups, each answered once its commit is visible to others', async () => {
    const c = start();
    const seen = await Promise.all(
      Array.from({ length: 300 }, (_v, i) =>
        c
          .write(async (tx) => (await tx.query('INSERT INTO t VALUES ($1, $2) RETURNING id', [i, `v${i}`])).rows[0]!.id)
          .then(async (id: number) => [id, await visible(id)] as const),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 300 }, (_v, i) => [i, true]));
    expect(commits.reduce((a, b) => a + b, 0)).toBe(300);
    // 300 writes queued within one event-loop turn: far fewer commits than writes.
    expect(commits.length).toBeLessThanOrEqual(4);
  });

  it('keeps the writes of one writeTogether in one group, in their order, however the queue is shared out', async () => {
    const c = start({ maxBatch: 8 });
    // Some single writes around a bundle of 20, larger than a group: the bundle is not split.
    const insert = (i: number) => (tx: PgTx) => tx.query(`INSERT INTO t VALUES ($1, nextval('t_order')::text)`, [i]);
    await pool.query('DROP SEQUENCE IF EXISTS t_order');
    await pool.query('CREATE SEQUENCE t_order');
    const singles = [100, 101, 102].map((i) => c.write(insert(i)));
    const bundle = c.writeTogether(Array.from({ length: 20 }, (_v, i) => insert(i)));
    const after = [103, 104].map((i) => c.write(insert(i)));
    await Promise.all([...singles, ...bundle, ...after]);
    const rows = (await other.query<{ id: number }>('SELECT id FROM t WHERE id < 100 ORDER BY v::int')).rows;
    // nextval is taken as each statement runs: the bundle ran in its order.
    const order = rows.map((r) => r.id);
    expect(order).toEqual(Array.from({ length: 20 }, (_v, i) => i));
    // One group of at least the bundle's 20 writes, though a group is 8 at most otherwise.
    expect(commits.some((n) => n >= 20)).toBe(true);
  });

  it('answers an item that throws before writing alone, in the same group as the others', async () => {
    const c = start({ parallel: 1 });
    const results = await Promise.allSettled([
      c.write((tx) => tx.query("INSERT INTO t VALUES (1, 'a')")),
      c.write(async (tx) => {
        await tx.query('SELECT 1');
        throw new Error('refused');
      }),
      c.write((tx) => tx.query("INSERT INTO t VALUES (2, 'b')")),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('refused'));
    expect(commits).toEqual([3]);
    expect((await other.query('SELECT id FROM t ORDER BY id')).rows).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('undoes only its own writes when an item fails after writing, or its statement fails', async () => {
    const c = start({ parallel: 1 });
    const runs: number[] = [];
    const results = await Promise.allSettled([
      c.write(async (tx) => {
        runs.push(1);
        await tx.query("INSERT INTO t VALUES (1, 'a')");
      }),
      c.write(async (tx) => {
        await tx.query("INSERT INTO t VALUES (2, 'wrote, then threw')");
        throw new Error('after writing');
      }),
      // A duplicate key: PostgreSQL refuses every later statement of that transaction.
      c.write((tx) => tx.query("INSERT INTO t VALUES (1, 'duplicate')")),
      c.write((tx) => tx.query("INSERT INTO t VALUES (3, 'c')")),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect((await other.query('SELECT id, v FROM t ORDER BY id')).rows).toEqual([
      { id: 1, v: 'a' },
      { id: 3, v: 'c' },
    ]);
    // The group ran once optimistically and once item by item.
    expect(runs).toEqual([1, 1]);
    expect(commits).toEqual([4]);
  });

  it('undoes the writes of an item that threw after writing, though no statement failed', async () => {
    const c = start({ parallel: 1 });
    const results = await Promise.allSettled([
      c.write((tx) => tx.query("INSERT INTO t VALUES (1, 'a')")),
      c.write(async (tx) => {
        await tx.query("INSERT INTO t VALUES (2, 'wrote, then threw')");
        throw new Error('after writing');
      }),
      // An UPDATE of no row wrote nothing: it is answered alone, with no second run.
      c.write(async (tx) => {
        await tx.query("UPDATE t SET v = 'none' WHERE id = 99");
        throw new Error('nothing to change');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect((await other.query('SELECT id FROM t ORDER BY id')).rows).toEqual([{ id: 1 }]);
  });

  it('undoes the writes of an item that wrote through a WITH … INSERT, though its command tag says SELECT', async () => {
    const c = start({ parallel: 1 });
    const results = await Promise.allSettled([
      c.write((tx) => tx.query("INSERT INTO t VALUES (1, 'a')")),
      // The accept's statement has this shape: PostgreSQL tags it SELECT, with the SELECT's rows.
      c.write(async (tx) => {
        const r = await tx.query("WITH i AS (INSERT INTO t VALUES (2, 'cte') RETURNING id) SELECT count(*) FROM i");
        expect(r.command).toBe('SELECT');
        throw new Error('after writing');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((await other.query('SELECT id FROM t ORDER BY id')).rows).toEqual([{ id: 1 }]);
  });

  it('runs again a group that deadlocked with another, so both writes succeed', async () => {
    await pool.query("INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    const c = start({ parallel: 2, maxBatch: 1 });
    // Two groups on two connections lock rows 1 and 2 in opposite orders, each waiting until
    // the other holds its first row: PostgreSQL must end one of them with a deadlock.
    let bothLocked!: () => void;
    const locked = new Promise<void>((r) => (bothLocked = r));
    let first = 0;
    const oneRow = () => {
      if (++first === 2) bothLocked();
      return locked;
    };
    const [a, b] = await Promise.allSettled([
      c.write(async (tx) => {
        await tx.query("UPDATE t SET v = v || 'a' WHERE id = 1");
        await oneRow();
        await tx.query("UPDATE t SET v = v || 'a' WHERE id = 2");
      }),
      c.write(async (tx) => {
        await tx.query("UPDATE t SET v = v || 'b' WHERE id = 2");
        await oneRow();
        await tx.query("UPDATE t SET v = v || 'b' WHERE id = 1");
      }),
    ]);
    expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
    // At least one group ran again. A loaded machine saw 3 retries once (CI, not reproduced
    // idle): how often PostgreSQL's detector ends a group is its scheduling, not the committer's.
    // What the committer owes is below: both succeed, each group applied once.
    expect(retried).toBeGreaterThanOrEqual(1);
    const rows = (await other.query<{ v: string }>('SELECT v FROM t ORDER BY id')).rows.map((r) => r.v);
    // Each group's two updates are both in, once: one group entirely before the other.
    expect([
      ['xab', 'yab'],
      ['xba', 'yba'],
    ]).toContainEqual(rows);
  });

  it('writes a counter that many writes add to once per group, with their sum; a refused item adds nothing', async () => {
    await pool.query('CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
    await pool.query('TRUNCATE counter');
    const c = start({ parallel: 1 });
    let writes = 0;
    const add = async (tx: PgTx, total: number) => {
      writes++;
      await tx.query('INSERT INTO counter VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET n = counter.n + excluded.n', [
        total,
      ]);
      return true;
    };
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_v, i) =>
        c.write(async (tx) => {
          await tx.addAtCommit('counter 1', 2, add);
          if (i === 7) throw new Error('refused after counting');
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect((await other.query('SELECT n FROM counter')).rows).toEqual([{ n: 98 }]);
    expect(writes).toBe(commits.length);
  });

  it('runs a group item by item when the sum is refused, so each write gets its own answer', async () => {
    await pool.query('CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
    await pool.query('TRUNCATE counter');
    const c = start({ parallel: 1 });
    // A ceiling of 10: of six writes of 3, three fit.
    const add = async (tx: PgTx, total: number) =>
      ((
        await tx.query(
          `INSERT INTO counter VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET n = counter.n + excluded.n
           WHERE counter.n + excluded.n <= 10`,
          [total],
        )
      ).rowCount ?? 0) > 0 && total <= 10;
    const results = await Promise.all(
      Array.from({ length: 6 }, () => c.write((tx) => tx.addAtCommit('counter 1', 3, add))),
    );
    expect(results).toEqual([true, true, true, false, false, false]);
    expect((await other.query('SELECT n FROM counter')).rows).toEqual([{ n: 9 }]);
  });

  it('commits what is queued on close, and refuses writes after', async () => {
    const c = start({ windowMs: 60_000 });
    const pending = c.write((tx) => tx.query("INSERT INTO t VALUES (7, 'late')"));
    await c.close();
    await pending;
    expect(await visible(7)).toBe(true);
    await expect(c.write((tx) => tx.query('SELECT 1'))).rejects.toThrow('store is closed');
  });
});
