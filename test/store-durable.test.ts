// SQLite syncs its WAL off the event loop (src/store/wal-sync.ts): a group is visible from its
// COMMIT and on disk a moment later. What answers a client as durable waits for the disk.
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../src/app-store.ts';
import type { AcceptOptions } from '../src/emails/store.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { AT, SEED } from './contract/stores.ts';
import { newEmail } from './postgres/email-fixture.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A store whose WAL syncs wait for the test's `release()`. */
function storeWithHeldSync() {
  const held: { fd: number; done: (err: NodeJS.ErrnoException | null) => void }[] = [];
  const sync = ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) =>
    void held.push({ fd, done })) as unknown as typeof fdatasync;
  const dir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
  dirs.push(dir);
  const store = openSqliteStore(join(dir, 'data'), {
    clock: new FakeClock(Date.parse(AT)),
    createDataDir: true,
    fdatasync: sync,
  });
  store.sqlite!.exec(SEED);
  const release = () => {
    const h = held.shift()!;
    fdatasync(h.fd, h.done);
  };
  return { store, held, release };
}

const state = async (p: Promise<unknown>) => {
  let s = 'pending';
  p.then(
    () => (s = 'resolved'),
    () => (s = 'rejected'),
  );
  await new Promise((r) => setImmediate(r));
  return s;
};

describe('the WAL synced off the event loop', () => {
  it('answers an idempotent replay only once the first send is on disk', async () => {
    const { store, held, release } = storeWithHeldSync();
    const idempotency = { key: 'k1', hash: 'h1', expiresAt: '2026-11-27T12:00:00.000Z' };
    const opts: AcceptOptions = { suppress: false, volume: null, idempotency };
    const first = store.emails.acceptEmail(
      newEmail('e1', { to: ['a@x.test'], created_at: AT }),
      [{ address: 'a@x.test', kind: 'to' }],
      opts,
    );
    await vi.waitFor(() => expect(held).toHaveLength(1));
    // The first send is committed (its record is read), not yet on disk: neither is answered.
    const replay = store.emails.findIdempotent('p1', 'k1', 'h1', AT);
    expect(await state(first)).toBe('pending');
    expect(await state(replay)).toBe('pending');
    release();
    const { response } = await first;
    // The replay asked after that sync began: it waits for one of its own.
    expect(await state(replay)).toBe('pending');
    await vi.waitFor(() => expect(held).toHaveLength(1));
    release();
    await expect(replay).resolves.toEqual({ replay: true, response });
    const closing = store.close();
    while (held.length) release();
    await closing;
  });
});
