import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/store/db.ts';
import { loadPgMigrations } from '../src/store/pg.ts';
import { runSvc } from './cli-runner.ts';
import { freshPgDatabase } from './postgres/db.ts';

describe('svc migrate, and --database (SVC_DATABASE_URL)', () => {
  let dir: string;
  let url: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
    ({ url, drop } = await freshPgDatabase('cli'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await drop?.();
  });

  it('brings an empty PostgreSQL database to the latest schema, then says it is up to date', async () => {
    const latest = loadPgMigrations().at(-1)!.version;
    const first = await runSvc(dir, ['migrate', '--database', url]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      new RegExp(`: schema version 0 -> ${latest} \\(0001_initial\\.sql.*\\) in [\\d.]+ s\\n$`),
    );
    const again = await runSvc(dir, ['migrate', '--json'], { SVC_DATABASE_URL: url });
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ store: 'postgres', database: url, from: latest, to: latest, applied: [] });
  });

  it('on the data dir, migrates the SQLite file, and refuses a missing data dir', async () => {
    const missing = await runSvc(dir, ['migrate']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: store_unavailable: no svc data dir at .*data/);
    expect((await runSvc(dir, ['init', '--email', 'a@b.co', '--password', 'correct horse battery'])).code).toBe(0);
    const done = await runSvc(dir, ['migrate', '--json']);
    expect(done.code).toBe(0);
    const latest = loadMigrations().at(-1)!.version;
    expect(done.json()).toMatchObject({ store: 'sqlite', from: latest, to: latest, applied: [] });
  });

  it('hides the password of a server it cannot reach, and refuses a URL that is not postgres://', async () => {
    const down = await runSvc(dir, ['migrate', '--database', 'postgres://svc:s3cret@127.0.0.1:1/svc']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: store_unavailable: cannot connect to PostgreSQL at postgres:\/\/svc:\*\*\*@/);
    expect(down.stderr).not.toContain('s3cret');
    const wrong = await runSvc(dir, ['migrate'], { SVC_DATABASE_URL: 'mysql://db/svc' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(
      'error: invalid_setting: invalid setting --database (SVC_DATABASE_URL): a postgres:// URL\n',
    );
  });

  it('refuses what does not run on PostgreSQL yet with one line, rather than using the data dir', async () => {
    for (const args of [
      ['serve', '--http-port', '0', '--smtp-port', '0'],
      ['keys', 'list', '--project', 'Default'],
      ['backup', join(dir, 'copy.sqlite')],
      ['top'],
    ]) {
      const r = await runSvc(dir, [...args, '--database', url]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: store_unavailable: .*PostgreSQL/);
    }
  });
});
