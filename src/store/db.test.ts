import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase, StoreOpenError } from './db.ts';
import { createCommitter } from './committer.ts';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-db-'));
  dirs.push(d);
  return d;
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('openDatabase', () => {
  it('applies every migration once, in WAL mode with synchronous=FULL', async () => {
    const dir = tempDir();
    const first = openDatabase(dir);
    const latest = loadMigrations().at(-1)!.version;
    expect(first.db.pragma('user_version', { simple: true })).toBe(latest);
    expect(first.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(first.db.pragma('synchronous', { simple: true })).toBe(2);
    await first.close();
    const again = openDatabase(dir);
    expect(again.db.pragma('user_version', { simple: true })).toBe(latest);
    await again.close();
  });

  it('refuses a database newer than this binary with one clear line', async () => {
    const dir = tempDir();
    const s = openDatabase(dir);
    s.db.pragma('user_version = 999');
    await s.close();
    expect(() => openDatabase(dir)).toThrow(StoreOpenError);
    expect(() => openDatabase(dir)).toThrow(/schema version 999, newer than this svc/);
  });

  it('refuses a corrupt file with one clear line', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'svc.sqlite'), Buffer.alloc(8192, 7));
    expect(() => openDatabase(dir)).toThrow(StoreOpenError);
    try {
      openDatabase(dir);
    } catch (e) {
      expect((e as Error).message).not.toContain('\n');
      expect((e as Error).message).toMatch(/svc\.sqlite/);
    }
  });

  it('runs the checkpoint worker and stops it on close', async () => {
    const dir = tempDir();
    const s = openDatabase(dir, { checkpointWorker: true });
    expect(s.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await s.close();
    expect(s.db.open).toBe(false);
  });
});

describe('group commit', () => {
  it('commits concurrent writes together and isolates a failing one', async () => {
    const dir = tempDir();
    const s = openDatabase(dir);
    s.db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    const tx = createCommitter(s.db, { windowMs: 5, maxBatch: 100 });
    const results = await Promise.allSettled([
      tx.write((db) => db.prepare('INSERT INTO t VALUES (1)').run().changes),
      tx.write((db) => {
        db.prepare('INSERT INTO t VALUES (2)').run();
        db.prepare('INSERT INTO t VALUES (1)').run(); // violates UNIQUE: only this item rolls back
      }),
      tx.write((db) => db.prepare('INSERT INTO t VALUES (3)').run().changes),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rows = s.db.prepare('SELECT v FROM t ORDER BY v').pluck().all();
    expect(rows).toEqual([1, 3]);
    // Durable: another connection sees exactly the committed rows.
    const other = new Database(join(dir, 'svc.sqlite'), { readonly: true });
    expect(other.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2);
    other.close();
    tx.close();
    await s.close();
  });

  it('answers an item that fails before writing without running the group again', async () => {
    const dir = tempDir();
    const s = openDatabase(dir);
    s.db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    const tx = createCommitter(s.db, { windowMs: 5, maxBatch: 100 });
    let runs = 0;
    const insert = (v: number) => (db: typeof s.db) => {
      runs++;
      return db.prepare('INSERT INTO t VALUES (?)').run(v).changes;
    };
    const results = await Promise.allSettled([
      tx.write(insert(1)),
      tx.write(() => {
        runs++;
        throw new Error('refused before any write');
      }),
      tx.write(insert(2)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(runs).toBe(3);
    expect(s.db.prepare('SELECT v FROM t ORDER BY v').pluck().all()).toEqual([1, 2]);
    tx.close();
    await s.close();
  });

  it('runs the group again, isolated, when an item fails after writing; the others commit once', async () => {
    const dir = tempDir();
    const s = openDatabase(dir);
    s.db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    const tx = createCommitter(s.db, { windowMs: 5, maxBatch: 100 });
    const runs: string[] = [];
    const results = await Promise.allSettled([
      tx.write((db) => {
        runs.push('a');
        return db.prepare('INSERT INTO t VALUES (10)').run().changes;
      }),
      tx.write((db) => {
        runs.push('b');
        db.prepare('INSERT INTO t VALUES (20)').run();
        throw new Error('fails after writing');
      }),
      tx.write((db) => {
        runs.push('c');
        return db.prepare('INSERT INTO t VALUES (30)').run().changes;
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(runs).toEqual(['a', 'b', 'a', 'b', 'c']);
    expect(s.db.prepare('SELECT v FROM t ORDER BY v').pluck().all()).toEqual([10, 30]);
    tx.close();
    await s.close();
  });

  it('flushes at maxBatch without waiting for the window', async () => {
    const dir = tempDir();
    const s = openDatabase(dir);
    s.db.exec('CREATE TABLE t (v INTEGER)');
    const tx = createCommitter(s.db, { windowMs: 60_000, maxBatch: 3 });
    await Promise.all([1, 2, 3].map((v) => tx.write((db) => db.prepare('INSERT INTO t VALUES (?)').run(v))));
    expect(s.db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3);
    tx.close();
    await s.close();
  });
});
