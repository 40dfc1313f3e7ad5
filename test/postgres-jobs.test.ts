import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgJobs } from '../src/store/jobs-pg.ts';
import { twoPgNodes, type PgNode } from './postgres/db.ts';

// Jobs one node at a time runs on a shared database (issue 17): retention, domain checks, purges.

let a: PgNode;
let b: PgNode;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ a, b, close } = await twoPgNodes('jobs'));
});
afterAll(() => close?.());

describe('jobs on PostgreSQL', () => {
  it('run on one node at a time: the other skips the turn, then may run the next', async () => {
    const [ja, jb] = [createPgJobs(a.pool), createPgJobs(b.pool)];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const first = ja.runExclusive('retention', async () => {
      started();
      await held;
    });
    await running;
    let ran = false;
    expect(await jb.runExclusive('retention', () => Promise.resolve(void (ran = true)))).toBe(false);
    expect(ran).toBe(false);
    // Another job is not held by this one.
    expect(await jb.runExclusive('domain-checks', async () => {})).toBe(true);
    release();
    expect(await first).toBe(true);
    expect(await jb.runExclusive('retention', () => Promise.resolve(void (ran = true)))).toBe(true);
    expect(ran).toBe(true);
  });

  it('let the job go when its run fails', async () => {
    const j = createPgJobs(a.pool);
    await expect(j.runExclusive('purge', () => Promise.reject(new Error('broken')))).rejects.toThrow('broken');
    expect(await createPgJobs(b.pool).runExclusive('purge', async () => {})).toBe(true);
  });
});
