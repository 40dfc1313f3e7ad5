// SQLite syncs its WAL off the event loop (src/store/wal-sync.ts): a group is visible from its
// COMMIT and on disk a moment later. It is answered only then, and what answers a client as
// durable waits for the disk too.
import Database from 'better-sqlite3';
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../src/app-store.ts';
import type { AcceptOptions } from '../src/emails/store.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { createCommitter } from '../src/store/committer.ts';
import { openDatabase } from '../src/store/db.ts';
import { AT, SEED } from './contract/stores.ts';
import { newEmail } from './postgres/email-fixture.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-durable-'));
  dirs.push(d);
  return d;
}

/** An fdatasync that waits for the test: `held` are the syncs asked for, each released by a call. */
function heldSync() {
  const held: { fd: number; done: (err: NodeJS.ErrnoException | null) => void }[] = [];
  const sync = ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) =>
    void held.push({ fd, done })) as unknown as typeof fdatasync;
  /** Runs the sync held first (a real fdatasync), or fails it with `err`. */
  const release = (err?: NodeJS.ErrnoException) => {
    const h = held.shift()!;
    if (err) return h.done(err);
    fdatasync(h.fd, h.done);
  };
  return { held, sync, release };
}

/** Whether `p` has settled by the next turn of the event loop. */
const state = async (p: Promise<unknown>) => {
  let s = 'pending';
  p.then(
    () => (s = 'resolved'),
    () => (s = 'rejected'),
  );
  await new Promise((r) => setImmediate(r));
  return s;
};

/** A fresh database with a table `t` and a committer that syncs its WAL through `h`. */
function committerOn(h: ReturnType<typeof heldSync>, onFailure: (e: Error) => void = () => {}) {
  const dir = tempDir();
  const s = openDatabase(dir, { create: true });
  s.db.exec('CREATE TABLE t (v INTEGER)');
  const tx = createCommitter(s.db, { windowMs: 1, maxBatch: 100, walSync: { onFailure, fdatasync: h.sync } });
  return {
    dir,
    s,
    tx,
    close: async () => {
      tx.close();
      await s.close();
    },
  };
}

describe('group commit with the WAL synced off the event loop', () => {
  it('answers a group once an fdatasync begun after its COMMIT returns; other statements stay FULL', async () => {
    const h = heldSync();
    const { dir, s, tx, close } = committerOn(h);
    const write = tx.write((db) => db.prepare('INSERT INTO t VALUES (1)').run().changes);
    await vi.waitFor(() => expect(h.held).toHaveLength(1));
    // Committed (another connection sees it), not answered: the sync has not returned.
    const other = new Database(join(dir, 'svc.sqlite'), { readonly: true });
    expect(other.prepare('SELECT count(*) FROM t').pluck().get()).toBe(1);
    other.close();
    expect(await state(write)).toBe('pending');
    // The connection is FULL again outside the group's COMMIT (2 = FULL).
    expect(s.db.pragma('synchronous', { simple: true })).toBe(2);
    h.release();
    await expect(write).resolves.toBe(1);
    await close();
  });

  it('shares one sync among the groups committed while another is in flight', async () => {
    const h = heldSync();
    const { tx, close } = committerOn(h);
    const first = tx.write((db) => db.prepare('INSERT INTO t VALUES (1)').run().changes);
    await vi.waitFor(() => expect(h.held).toHaveLength(1));
    // Two more groups commit while the first group's sync is in flight: that sync began before
    // their COMMITs, so it cannot answer them; one more sync, begun after it returns, answers both.
    const second = tx.write((db) => db.prepare('INSERT INTO t VALUES (2)').run().changes);
    await vi.waitFor(async () => expect(await state(second)).toBe('pending'));
    tx.flush();
    const third = tx.write((db) => db.prepare('INSERT INTO t VALUES (3)').run().changes);
    tx.flush();
    const durable = tx.durable();
    expect(h.held).toHaveLength(1);
    h.release();
    await expect(first).resolves.toBe(1);
    expect(await state(second)).toBe('pending');
    await vi.waitFor(() => expect(h.held).toHaveLength(1));
    h.release();
    await expect(Promise.all([second, third, durable])).resolves.toEqual([1, 1, undefined]);
    await close();
  });

  it('refuses every write after a failed sync, without running it, and says so once', async () => {
    const h = heldSync();
    const failures: Error[] = [];
    const { tx, close } = committerOn(h, (e) => failures.push(e));
    const write = tx.write((db) => db.prepare('INSERT INTO t VALUES (1)').run().changes);
    await vi.waitFor(() => expect(h.held).toHaveLength(1));
    h.release(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(write).rejects.toThrow(/fdatasync of .*svc\.sqlite-wal failed: EIO/);
    let runs = 0;
    await expect(tx.write(() => runs++)).rejects.toThrow(/fdatasync/);
    await expect(tx.durable()).rejects.toThrow(/fdatasync/);
    expect(runs).toBe(0);
    expect(failures).toHaveLength(1);
    await close();
  });
});

describe('what answers as durable', () => {
  it('answers an idempotent replay only once the first send is on disk', async () => {
    const h = heldSync();
    const store = openSqliteStore(join(tempDir(), 'data'), {
      clock: new FakeClock(Date.parse(AT)),
      createDataDir: true,
      fdatasync: h.sync,
    });
    store.sqlite!.exec(SEED);
    const idempotency = { key: 'k1', hash: 'h1', expiresAt: '2026-11-27T12:00:00.000Z' };
    const opts: AcceptOptions = { suppress: false, volume: null, idempotency };
    const first = store.emails.acceptEmail(
      newEmail('e1', { to: ['a@x.test'], created_at: AT }),
      [{ address: 'a@x.test', kind: 'to' }],
      opts,
    );
    await vi.waitFor(() => expect(h.held).toHaveLength(1));
    // The first send is committed (its record is read), not yet on disk: neither is answered.
    const replay = store.emails.findIdempotent('p1', 'k1', 'h1', AT);
    expect(await state(first)).toBe('pending');
    expect(await state(replay)).toBe('pending');
    h.release();
    const { response } = await first;
    // The replay asked after that sync began: it waits for one of its own.
    expect(await state(replay)).toBe('pending');
    await vi.waitFor(() => expect(h.held).toHaveLength(1));
    h.release();
    await expect(replay).resolves.toEqual({ replay: true, response });
    const closing = store.close();
    while (h.held.length) h.release();
    await closing;
  });
});
