import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE } from './data-dir.ts';
import { openDatabase } from './db.ts';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the checkpoint worker', () => {
  it('empties the WAL with a TRUNCATE checkpoint when asked, on its own thread', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-ckpt-'));
    // Passes far apart: only the TRUNCATE asked for empties the WAL here.
    const s = openDatabase(dir, { create: true, checkpointWorker: { idleMs: 60_000, busyMs: 60_000 } });
    try {
      s.db.exec('CREATE TABLE t (v BLOB)');
      const insert = s.db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 200; i++) insert.run(Buffer.alloc(4096));
      const wal = join(dir, `${DATABASE_FILE}-wal`);
      expect(statSync(wal).size).toBeGreaterThan(200 * 4096);
      expect(s.truncateWal).toBeDefined();
      expect(await s.truncateWal!()).toBe(true);
      expect(statSync(wal).size).toBe(0);
      expect(s.db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 200 });
    } finally {
      await s.close();
    }
  });
});
