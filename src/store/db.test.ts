import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase, readMigrations, StoreOpenError, type OpenOptions } from './db.ts';
import { createCommitter, type CommitterOptions } from './committer.ts';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-db-'));
  dirs.push(d);
  return d;
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A fresh store with one table made by `ddl`, a committer on it, and `close` for both. */
function committerOn(ddl: string, opts: CommitterOptions, open: OpenOptions = {}) {
  const dir = tempDir();
  const s = openDatabase(dir, { create: true, ...open });
  s.db.exec(ddl);
  const tx = createCommitter(s.db, opts);
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

describe('readMigrations', () => {
  const folder = (...names: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-migrations-'));
    for (const n of names) writeFileSync(join(dir, n), 'SELECT 1;');
    return dir;
  };

  it('reads 0001, 0002 … in order, skipping other files', () => {
    const dir = folder('0002_b.sql', '0001_a.sql', 'README.md');
    expect(readMigrations(dir).map((m) => [m.version, m.name])).toEqual([
      [1, '0001_a.sql'],
      [2, '0002_b.sql'],
    ]);
    rmSync(dir, { recursive: true });
  });

  it.each([
    [['0001_a.sql', '0002_b.sql', '0002_c.sql'], /0002_c\.sql .* shares version 2 with 0002_b\.sql/],
    [['0001_a.sql', '0003_c.sql'], /0003_c\.sql .* follows version 1/],
  ])('refuses %j: a repeated or missing number would skip a migration for good', (names, message) => {
    const dir = folder(...names);
    expect(() => readMigrations(dir)).toThrow(message);
    rmSync(dir, { recursive: true });
  });

  it('holds for both stores as shipped', async () => {
    expect(loadMigrations().map((m) => m.version)).toEqual(loadMigrations().map((_, i) => i + 1));
    const { loadPgMigrations } = await import('./pg.ts');
    expect(loadPgMigrations().map((m) => m.version)).toEqual(loadPgMigrations().map((_, i) => i + 1));
  });
});

describe('openDatabase', () => {
  it('refuses a data dir with no database unless asked to create one, and then creates nothing', () => {
    const dir = tempDir();
    expect(() => openDatabase(join(dir, 'typo'))).toThrow(StoreOpenError);
    expect(() => openDatabase(dir)).toThrow(`no svc data dir at ${dir} (no svc.sqlite there)`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('applies every migration once, in WAL mode with synchronous=FULL', async () => {
    const dir = tempDir();
    const first = openDatabase(dir, { create: true });
    const latest = loadMigrations().at(-1)!.version;
    expect(first.db.pragma('user_version', { simple: true })).toBe(latest);
    expect(first.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(first.db.pragma('synchronous', { simple: true })).toBe(2);
    await first.close();
    const again = openDatabase(dir, { create: true });
    expect(again.db.pragma('user_version', { simple: true })).toBe(latest);
    await again.close();
  });

  it('upgrades a version 5 database: events kept in order, their ids no longer indexed', async () => {
    const dir = tempDir();
    const v5 = new Database(join(dir, 'svc.sqlite'));
    v5.pragma('journal_mode = WAL');
    v5.pragma('foreign_keys = OFF');
    for (const m of loadMigrations().filter((m) => m.version <= 5)) v5.exec(m.sql);
    v5.pragma('user_version = 5');
    v5.prepare(
      `INSERT INTO emails (seq, id, project_id, env, status, from_email, to_emails, subject, created_at)
       VALUES (7, 'e1', 'p1', 'LIVE', 'QUEUED', 'a@x.test', '["b@y.test"]', 'hi', '2026-11-23T00:00:00.000Z')`,
    ).run();
    const add = v5.prepare(
      'INSERT INTO email_events (seq, id, email_seq, type, data, created_at) VALUES (?, ?, 7, ?, ?, ?)',
    );
    add.run(3, 'ev-c', 'queued', '{}', '2026-11-23T00:00:00.000Z');
    add.run(9, 'ev-a', 'sending', '{"recipient":"b@y.test","attempt":1}', '2026-11-23T00:00:01.000Z');
    add.run(12, 'ev-b', 'delivered', '{"recipient":"b@y.test"}', '2026-11-23T00:00:02.000Z');
    v5.close();

    const s = openDatabase(dir, { create: true });
    expect(s.db.pragma('user_version', { simple: true })).toBe(loadMigrations().at(-1)!.version);
    expect(s.db.prepare('SELECT seq, id, type, data FROM email_events WHERE email_seq = 7 ORDER BY seq').all()).toEqual(
      [
        { seq: 3, id: 'ev-c', type: 'queued', data: '{}' },
        { seq: 9, id: 'ev-a', type: 'sending', data: '{"recipient":"b@y.test","attempt":1}' },
        { seq: 12, id: 'ev-b', type: 'delivered', data: '{"recipient":"b@y.test"}' },
      ],
    );
    const indexes = (s.db.pragma('index_list(email_events)') as { name: string }[]).map((i) => i.name);
    expect(indexes).toEqual(['email_events_email']);
    // New events continue the sequence, and deleting the email still takes its events with it.
    s.db.prepare("INSERT INTO email_events (id, email_seq, type, created_at) VALUES ('ev-d', 7, 'opened', 'x')").run();
    expect(s.db.prepare("SELECT seq FROM email_events WHERE id = 'ev-d'").pluck().get()).toBe(13);
    s.db.prepare('DELETE FROM emails WHERE seq = 7').run();
    expect(s.db.prepare('SELECT count(*) FROM email_events').pluck().get()).toBe(0);
    await s.close();
  });

  it('upgrades a version 17 database: bodies move to email_bodies, and deleting an email takes them and its tags', async () => {
    const dir = tempDir();
    const v17 = new Database(join(dir, 'svc.sqlite'));
    v17.pragma('journal_mode = WAL');
    v17.pragma('foreign_keys = OFF');
    for (const m of loadMigrations().filter((m) => m.version <= 17)) v17.exec(m.sql);
    v17.pragma('user_version = 17');
    const email = v17.prepare(
      `INSERT INTO emails (seq, id, project_id, env, status, from_email, to_emails, subject, html_body, text_body, created_at)
       VALUES (?, ?, 'p1', 'LIVE', 'DELIVERED', 'a@x.test', '["b@y.test"]', 'hi', ?, ?, '2026-11-23T00:00:00.000Z')`,
    );
    email.run(1, 'e1', '<p>one</p>', 'one');
    email.run(2, 'e2', null, 'two');
    email.run(3, 'e3', null, null);
    v17.prepare("INSERT INTO email_tags (email_seq, project_id, tag) VALUES (1, 'p1', 'news')").run();
    v17.close();

    const s = openDatabase(dir, { create: true });
    expect(s.db.pragma('user_version', { simple: true })).toBe(loadMigrations().at(-1)!.version);
    expect(s.db.prepare('SELECT email_seq, html_body, text_body FROM email_bodies ORDER BY email_seq').all()).toEqual([
      { email_seq: 1, html_body: '<p>one</p>', text_body: 'one' },
      { email_seq: 2, html_body: null, text_body: 'two' },
    ]);
    const columns = (s.db.pragma('table_info(emails)') as { name: string }[]).map((c) => c.name);
    expect(columns).not.toContain('html_body');
    expect(columns).not.toContain('text_body');
    s.db.prepare('DELETE FROM emails WHERE seq = 1').run();
    expect(s.db.prepare('SELECT count(*) FROM email_bodies').pluck().get()).toBe(1);
    expect(s.db.prepare('SELECT count(*) FROM email_tags').pluck().get()).toBe(0);
    // The tags of a deleted email are found by their index, not by reading every tag.
    const plan = s.db.prepare('EXPLAIN QUERY PLAN SELECT 1 FROM email_tags WHERE email_seq = ?').all(1) as {
      detail: string;
    }[];
    expect(plan.map((p) => p.detail).join()).toMatch(/USING (COVERING )?INDEX email_tags_email/);
    await s.close();
  });

  it('writes a small webhook outbox row with each event: its seq and the email status then, skip when inactive', async () => {
    const dir = tempDir();
    const s = openDatabase(dir, { create: true });
    s.db.pragma('foreign_keys = OFF');
    s.db.exec(`INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
      VALUES ('w1', 'p1', 'https://x.test/', '["*"]', 'whsec_x', 't', 't');
      INSERT INTO webhooks (id, project_id, url, events, secret, is_active, created_at, updated_at)
      VALUES ('w2', 'p1', 'https://y.test/', '["opened"]', 'whsec_y', 0, 't', 't');
      INSERT INTO emails (seq, id, project_id, env, status, from_email, to_emails, subject, created_at)
      VALUES (7, 'e1', 'p1', 'TEST', 'SIMULATED', 'a@x.test', '["b@y.test"]', 'hi', '2026-11-23T00:00:00.000Z');
      INSERT INTO email_events (seq, id, email_seq, type, created_at) VALUES (3, 'ev-2', 7, 'opened', 't')`);
    expect(
      s.db.prepare('SELECT webhook_id, payload, event_seq, email_status, skip FROM webhook_outbox ORDER BY seq').all(),
    ).toEqual([
      { webhook_id: 'w1', payload: null, event_seq: 3, email_status: 'SIMULATED', skip: 0 },
      { webhook_id: 'w2', payload: null, event_seq: 3, email_status: 'SIMULATED', skip: 1 },
    ]);
    await s.close();
  });

  it('refuses a database newer than this binary with one clear line', async () => {
    const dir = tempDir();
    const s = openDatabase(dir, { create: true });
    s.db.pragma('user_version = 999');
    await s.close();
    expect(() => openDatabase(dir, { create: true })).toThrow(StoreOpenError);
    expect(() => openDatabase(dir, { create: true })).toThrow(/schema version 999, newer than this svc/);
  });

  it('refuses a corrupt file with one clear line', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'svc.sqlite'), Buffer.alloc(8192, 7));
    expect(() => openDatabase(dir, { create: true })).toThrow(StoreOpenError);
    try {
      openDatabase(dir, { create: true });
    } catch (e) {
      expect((e as Error).message).not.toContain('\n');
      expect((e as Error).message).toMatch(/svc\.sqlite/);
    }
  });

  it('runs the checkpoint worker and stops it on close', async () => {
    const dir = tempDir();
    const s = openDatabase(dir, { create: true, checkpointWorker: true });
    expect(s.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await s.close();
    expect(s.db.open).toBe(false);
  });
});

describe('the checkpoint worker under a steady stream of commits', () => {
  it('keeps the WAL bounded: it is rewritten from the top instead of growing without end', async () => {
    // 64 frames of 4 KiB: restart at ~256 KiB of WAL; passes every 2 ms while commits come.
    const { dir, s, tx, close } = committerOn(
      'CREATE TABLE blobs (v BLOB)',
      { windowMs: 1, maxBatch: 100 },
      { checkpointWorker: { busyMs: 2, idleMs: 2, restartFrames: 64 } },
    );
    const wal = join(dir, 'svc.sqlite-wal');
    let largest = 0;
    // 400 commits of ~16 pages each, back to back: ~25 MiB through the WAL.
    for (let i = 0; i < 400; i++) {
      await tx.write((db) => {
        const insert = db.prepare('INSERT INTO blobs VALUES (randomblob(4000))');
        for (let j = 0; j < 16; j++) insert.run();
      });
      largest = Math.max(largest, statSync(wal).size);
    }
    expect(s.db.prepare('SELECT count(*) AS n FROM blobs').get()).toEqual({ n: 6400 });
    // PASSIVE checkpoints alone never reset a WAL that is always being written: it would reach ~25 MiB.
    expect(largest).toBeLessThan(8 * 1024 * 1024);
    await close();
  });
});

describe('group commit while another connection holds the write lock', () => {
  /** A store with table t, a committer on it, and a second connection holding the write lock. */
  function lockedStore(busyTimeoutMs = 5000) {
    const store = committerOn('CREATE TABLE t (v INTEGER)', { windowMs: 1, maxBatch: 100, busyTimeoutMs });
    const other = new Database(join(store.dir, 'svc.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    return {
      ...store,
      other,
      close: async () => {
        other.close();
        await store.close();
      },
    };
  }

  it('waits without blocking the event loop, then commits once the lock is free', async () => {
    const { s, other, tx, close } = lockedStore();
    const write = tx.write((db) => db.prepare('INSERT INTO t VALUES (1)').run().changes);
    let settled = false;
    void write.finally(() => (settled = true));
    // SQLite's own busy handler would sleep on this thread for up to busy_timeout (5 s);
    // the event loop must keep turning instead.
    const ticks = await new Promise<number>((resolve) => {
      let n = 0;
      const t = setInterval(() => {
        if (++n === 20) {
          clearInterval(t);
          resolve(n);
        }
      }, 1);
    });
    expect(ticks).toBe(20);
    expect(settled).toBe(false);
    expect(s.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    other.exec('COMMIT');
    await expect(write).resolves.toBe(1);
    expect(s.db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
    await close();
  });

  it('fails the waiting writes with SQLITE_BUSY once the lock stays taken past busyTimeoutMs', async () => {
    const { s, other, tx, close } = lockedStore(30);
    const writes = [1, 2].map((v) => tx.write((db) => db.prepare('INSERT INTO t VALUES (?)').run(v).changes));
    for (const w of writes) await expect(w).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    other.exec('COMMIT');
    // The committer is usable again afterwards.
    await expect(tx.write((db) => db.prepare('INSERT INTO t VALUES (3)').run().changes)).resolves.toBe(1);
    expect(s.db.prepare('SELECT v FROM t').pluck().all()).toEqual([3]);
    await close();
  });
});

describe('group commit', () => {
  it('commits concurrent writes together and isolates a failing one', async () => {
    const { dir, s, tx, close } = committerOn('CREATE TABLE t (v INTEGER UNIQUE)', { windowMs: 5, maxBatch: 100 });
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
    await close();
  });

  it('answers an item that fails before writing without running the group again', async () => {
    const { s, tx, close } = committerOn('CREATE TABLE t (v INTEGER UNIQUE)', { windowMs: 5, maxBatch: 100 });
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
    await close();
  });

  it('runs the group again, isolated, when an item fails after writing; the others commit once', async () => {
    const { s, tx, close } = committerOn('CREATE TABLE t (v INTEGER UNIQUE)', { windowMs: 5, maxBatch: 100 });
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
    await close();
  });

  it('answers storage_full without running the write while the disk is known full, and writes again after', async () => {
    let full = true;
    const { s, tx, close } = committerOn('CREATE TABLE t (v INTEGER)', {
      windowMs: 1,
      maxBatch: 100,
      refusing: () => full,
    });
    let runs = 0;
    const insert = (db: typeof s.db) => {
      runs++;
      return db.prepare('INSERT INTO t VALUES (1)').run().changes;
    };
    await expect(tx.write(insert)).rejects.toMatchObject({ code: 'storage_full' });
    expect(runs).toBe(0);
    full = false;
    await expect(tx.write(insert)).resolves.toBe(1);
    expect(s.db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(1);
    await close();
  });

  it('flushes at maxBatch without waiting for the window', async () => {
    const { s, tx, close } = committerOn('CREATE TABLE t (v INTEGER)', { windowMs: 60_000, maxBatch: 3 });
    await Promise.all([1, 2, 3].map((v) => tx.write((db) => db.prepare('INSERT INTO t VALUES (?)').run(v))));
    expect(s.db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3);
    await close();
  });
});
