import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createApp, type App } from '../src/app.ts';
import { initialize } from '../src/accounts/index.ts';
import { loadConfig } from '../src/config/load.ts';
import { createHttpServer } from '../src/http/server.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { email } from './http-helpers.ts';
import { freshPgDatabase } from './postgres/db.ts';
import { cannotMountTmpfs, fillDisk, mountTmpfs } from './peers/tmpfs.ts';

// Issue 26, item 2 on PostgreSQL: its disk-full error (SQLSTATE 53100) is the same 503
// storage_full with Retry-After, and /readyz says not ready. The emails table is moved to a
// tablespace on an 8 MiB tmpfs, which is then filled: needs root, as the SQLite test does.

const skipReason = cannotMountTmpfs();
if (skipReason) console.warn(`postgres-disk-full.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('a full disk on PostgreSQL (SQLSTATE 53100)', () => {
  let tmpfs: ReturnType<typeof mountTmpfs> | undefined;
  let mount: string;
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  let admin: pg.Client;
  let app: App;
  let server: FastifyInstance;
  let key: string;
  const tablespace = `svc_small_${process.pid}`;

  beforeAll(async () => {
    // The test server runs as the user that owns its data (nobody when started by root).
    db = await freshPgDatabase('disk_full');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const { rows } = await admin.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
    const [uid, gid] = execFileSync('stat', ['-c', '%u %g', rows[0]!.dir], { encoding: 'utf8' }).trim().split(' ');
    tmpfs = mountTmpfs('8m', `mode=0700,uid=${uid},gid=${gid}`);
    mount = tmpfs.dir;
    await admin.query(`CREATE TABLESPACE ${tablespace} LOCATION '${mount}'`);
    const config = loadConfig({ flags: { dataDir: mount, database: db.url, templateTimeout: '500ms' } });
    app = await createApp(config, { clock: new FakeClock('2026-03-15T12:00:00.000Z') });
    const init = await initialize(app.accounts, app.keys, {
      email: 'owner@example.com',
      password: 'owner-password-1',
      org: 'Acme',
      project: 'Web',
      plan: 'UNLIMITED',
      acceptDpa: true,
    });
    key = init.api_key.key!;
    await admin.query(`ALTER TABLE emails SET TABLESPACE ${tablespace}`);
    server = createHttpServer(app);
    await server.ready();
  });

  afterAll(async () => {
    await server?.close();
    await app?.close().catch(() => {});
    await admin?.query(`ALTER TABLE emails SET TABLESPACE pg_default`).catch(() => {});
    await admin?.query(`DROP TABLESPACE IF EXISTS ${tablespace}`).catch(() => {});
    await admin?.end();
    await db?.drop();
    tmpfs?.unmount();
  });

  const send = (i: number) =>
    server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${key}` },
      payload: email({ subject: `s${i}`, text: 'y'.repeat(20_000) }),
    });

  it('answers 503 storage_full with Retry-After and is not ready', async () => {
    expect((await send(0)).statusCode).toBe(202);
    fillDisk(join(mount, 'fill'));
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 1; i < 300 && !refused; i++) {
      const r = await send(i);
      if (r.statusCode !== 202) refused = r;
    }
    expect(refused?.statusCode).toBe(503);
    expect(refused?.json().error.code).toBe('storage_full');
    expect(refused?.headers['retry-after']).toBe('30');
    const ready = await server.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().data).toMatchObject({ status: 'not_ready', store: 'postgres', reason: 'storage_full' });
    expect((await server.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^svc_storage_full 1$/m);
  });
});
