import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { runSvc, startServe } from './cli-runner.ts';

// svc backup and svc restore (issue 16, item 3), as an operator runs them: the CLI in its
// own process beside a server that keeps writing.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-backup-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function testEnv(): Promise<TestEnv> {
  const env = await createTestEnv();
  cleanups.push(() => env.close());
  return env;
}

const ids = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return new Set((db.prepare('SELECT id FROM emails').all() as { id: string }[]).map((r) => r.id));
  } finally {
    db.close();
  }
};

describe('svc backup', () => {
  it('copies the database while emails keep being accepted, holding every one acknowledged before it began', async () => {
    const env = await testEnv();
    const key = await env.key();
    const acknowledged: string[] = [];
    let sending = true;
    const load = (async () => {
      for (let i = 0; sending; i++) {
        const res = await env.server.inject({
          method: 'POST',
          url: '/v1/emails',
          headers: { authorization: `Bearer ${key}` },
          payload: { from: 'a@example.com', to: [`r${i}@example.net`], subject: `n${i}`, text: 'x'.repeat(2000) },
        });
        if (res.statusCode === 202) acknowledged.push(res.json().data.id as string);
      }
    })();
    while (acknowledged.length < 300) await new Promise((r) => setTimeout(r, 10));
    const before = [...acknowledged];
    const file = join(tempDir(), 'backup.sqlite');
    const run = await runSvc(env.dir, ['backup', file, '--json'], { SVC_DATA_DIR: env.dir });
    sending = false;
    await load;
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ file, pages: expect.any(Number), bytes: statSync(file).size });
    expect(acknowledged.length).toBeGreaterThan(before.length);
    const copied = ids(file);
    for (const id of before) expect(copied.has(id), id).toBe(true);
    // It holds DKIM keys and hashes: its owner only.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const db = new Database(file, { readonly: true });
    expect(db.pragma('quick_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('leaves the backup file alone in its directory, no -wal or -shm, also once read', async () => {
    const env = await testEnv();
    await env.key();
    const dir = tempDir();
    const file = join(dir, 'out.sqlite');
    const run = await runSvc(env.dir, ['backup', file], { SVC_DATA_DIR: env.dir });
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual(['out.sqlite']);
    // A rollback-journal database (header bytes 18 and 19 are 1, not WAL's 2): readers leave nothing beside it.
    expect([...readFileSync(file).subarray(18, 20)]).toEqual([1, 1]);
    expect(ids(file)).toBeInstanceOf(Set);
    expect(readdirSync(dir)).toEqual(['out.sqlite']);
  });

  it('refuses to overwrite a file, and a data dir that does not exist: exit 1', async () => {
    const env = await testEnv();
    const file = join(tempDir(), 'exists.sqlite');
    writeFileSync(file, 'keep me');
    const exists = await runSvc(env.dir, ['backup', file], { SVC_DATA_DIR: env.dir });
    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(/error: refused: .*exists\.sqlite exists: choose a new file name/);
    const missing = await runSvc(env.dir, ['backup', join(tempDir(), 'b.sqlite')], {
      SVC_DATA_DIR: join(env.dir, 'nope'),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no svc data dir/);
  });
});

describe('svc restore', () => {
  it('refuses under a running server, needs --force over a database, then restores the backup', async () => {
    const dir = tempDir();
    const served = await startServe(dir);
    let running = true;
    cleanups.push(() => running && served.stop());
    const data = join(dir, 'data');
    const backup = join(dir, 'backup.sqlite');
    expect((await runSvc(dir, ['backup', backup])).code).toBe(0);
    // Something the backup does not hold, to see it go.
    const key = (await runSvc(dir, ['keys', 'create', '--project', 'Default', '--name', 'later', '--json'])).json();
    expect(key.name).toBe('later');

    const refused = await runSvc(dir, ['restore', backup, '--force']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/error: refused: svc serve \(pid \d+\) is running on .*: stop it before restoring/);

    expect(await served.stop()).toBe(0);
    running = false;
    expect(existsSync(join(data, 'serve.pid'))).toBe(false);
    const noForce = await runSvc(dir, ['restore', backup]);
    expect(noForce.code).toBe(1);
    expect(noForce.stderr).toMatch(/already holds a database: add --force/);

    const ok = await runSvc(dir, ['restore', backup, '--force', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ file: join(data, 'svc.sqlite'), schema_version: expect.any(Number) });
    const keys = (await runSvc(dir, ['keys', 'list', '--project', 'Default', '--json'])).json() as { name: string }[];
    expect(keys.map((k) => k.name)).not.toContain('later');
    expect(statSync(join(data, 'svc.sqlite')).mode & 0o777).toBe(0o600);
  });

  it('ignores the pid file of a server that was killed', async () => {
    const dir = tempDir();
    const served = await startServe(dir);
    const backup = join(dir, 'backup.sqlite');
    expect((await runSvc(dir, ['backup', backup])).code).toBe(0);
    served.child.kill('SIGKILL');
    await new Promise((r) => served.child.once('exit', r));
    expect(existsSync(join(dir, 'data', 'serve.pid'))).toBe(true);
    const ok = await runSvc(dir, ['restore', backup, '--force']);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('refuses a file that is not an svc database, or one from a newer svc', async () => {
    const dir = tempDir();
    const junk = join(dir, 'junk.sqlite');
    writeFileSync(junk, 'not a database at all, just some bytes '.repeat(200));
    const a = await runSvc(dir, ['restore', junk]);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/refused: .*junk\.sqlite is (?:not an SQLite database|corrupt|not a readable)/);
    const other = join(dir, 'other.sqlite');
    const o = new Database(other);
    o.exec('CREATE TABLE t (x)');
    o.close();
    expect((await runSvc(dir, ['restore', other])).stderr).toMatch(/other\.sqlite is not an svc database/);
    const newer = join(dir, 'newer.sqlite');
    const n = new Database(newer);
    n.exec('CREATE TABLE organizations (id)');
    n.pragma('user_version = 9999');
    n.close();
    expect((await runSvc(dir, ['restore', newer])).stderr).toMatch(/schema version 9999, newer than this svc/);
    expect(existsSync(join(dir, 'data', 'svc.sqlite'))).toBe(false);
  });
});
