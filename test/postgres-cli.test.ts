import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/store/db.ts';
import { loadPgMigrations, redactUrl } from '../src/store/pg.ts';
import { runSvc, startServe } from './cli-runner.ts';
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

  it('refuses what works on the data dir only with one line, rather than using the data dir', async () => {
    for (const args of [
      ['backup', join(dir, 'copy.sqlite')],
      ['restore', join(dir, 'copy.sqlite')],
    ]) {
      const r = await runSvc(dir, [...args, '--database', url]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: store_unavailable: .*PostgreSQL/);
    }
  });

  it('serves on PostgreSQL: first start, a send, /readyz naming the store, the admin commands and svc top', async () => {
    const served = await startServe(dir, ['--database', url]);
    try {
      const line = served
        .log()
        .split('\n')
        .find((l) => l.includes('svc is serving'))!;
      const logged = JSON.parse(line) as { url: string; database: string; data_dir?: string };
      // The URL it logs hides the password; no data dir is named.
      expect(logged.database).toBe(redactUrl(url));
      const password = new URL(url).password;
      if (password) expect(line).not.toContain(password);
      expect(logged.data_dir).toBeUndefined();
      const key = /TEST API key:\s+(\S+)/.exec(served.stdout())![1]!;
      // The first start names where it created the owner: the database, not a data dir.
      expect(served.stdout()).toContain(`First start on ${redactUrl(url)}: created an owner`);
      const ready = await fetch(`${logged.url}/readyz`);
      const { data } = (await ready.json()) as { data: Record<string, unknown> };
      // Ready, naming its store; svc doctor's latest report rides along once its first run ended.
      expect({ status: data.status, store: data.store }).toEqual({ status: 'ready', store: 'postgres' });
      expect(Object.keys(data).filter((k) => !['status', 'store', 'doctor'].includes(k))).toEqual([]);
      const sent = await fetch(`${logged.url}/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'a@example.com', to: ['b@example.net'], subject: 'S', text: 'T' }),
      });
      expect(sent.status).toBe(202);
      // An admin command in another shell sees the same database.
      const keys = await runSvc(dir, ['keys', 'list', '--project', 'Default', '--database', url, '--json']);
      expect(keys.code).toBe(0);
      expect(keys.json().map((k: { name: string }) => k.name)).toEqual(['default']);
      // svc top reads the database every node writes to.
      const top = await runSvc(dir, ['top', '--database', url, '--json']);
      expect(top.code, top.stderr).toBe(0);
      expect(top.json()).toMatchObject({ last_minute: { simulated: 1 } });
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it('stops on SIGTERM even after its database went away', async () => {
    const gone = await freshPgDatabase('gone');
    const served = await startServe(dir, ['--database', gone.url]);
    // The database is dropped under it, its connections ended.
    await gone.drop();
    // It keeps running (before, a connection's error event crashed it), and still answers.
    await sleep(500);
    expect(served.child.exitCode, served.log()).toBeNull();
    const health = await fetch(`${served.url()}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${served.url()}/readyz`);
    expect(ready.status).toBe(503);
    const t0 = Date.now();
    const code = await served.stop();
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect([0, 1]).toContain(code);
  }, 30_000);

  it('starts two nodes together on an empty database: one migrates it and creates the owner, both serve', async () => {
    const empty = await freshPgDatabase('together');
    const dirs = ['a', 'b'].map((n) => mkdtempSync(join(dir, `${n}-`)));
    const nodes = await Promise.all(dirs.map((d) => startServe(d, ['--database', empty.url])));
    try {
      expect(nodes.filter((n) => n.stdout().includes('First start on')).map(() => 1)).toEqual([1]);
      for (const n of nodes) expect((await fetch(`${n.url()}/readyz`)).status).toBe(200);
    } finally {
      for (const n of nodes) expect(await n.stop()).toBe(0);
      await empty.drop();
    }
  }, 30_000);
});
