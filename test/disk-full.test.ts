import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createApp, type App } from '../src/app.ts';
import { initialize } from '../src/accounts/index.ts';
import { loadConfig } from '../src/config/load.ts';
import { createHttpServer } from '../src/http/server.ts';
import { FakeClock } from '../src/lib/clock.ts';
import type { SmtpRelay } from '../src/smtp/index.ts';
import { RESERVE_FILE } from '../src/store/disk.ts';
import { email } from './http-helpers.ts';
import { cannotMountTmpfs, fillDisk, mountTmpfs } from './peers/tmpfs.ts';
import { testRelay } from './relay-helpers.ts';

// Issue 26, item 2: a full disk is answered as such (503 storage_full with Retry-After, 452
// 4.3.1, /readyz 503), and the server comes back by itself once space is freed. Measured on
// a real 8 MiB tmpfs, so this needs root (CI and the dev machine run as root).

const skipReason = cannotMountTmpfs();
if (skipReason) console.warn(`disk-full.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('a full disk (8 MiB tmpfs)', () => {
  let tmpfs: ReturnType<typeof mountTmpfs> | undefined;
  let mount: string;
  let dataDir: string;
  let app: App;
  let server: FastifyInstance;
  let relay: SmtpRelay;
  let smtpPort: number;
  let key: string;
  const fill = () => join(mount, 'fill');

  const send = (subject = 'x') =>
    server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${key}` },
      payload: email({ subject, text: 'y'.repeat(60_000) }),
    });
  const relayed = () =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true, auth: { user: 'apikey', pass: key } })
      .sendMail({ from: 'news@example.com', to: 'a@example.net', subject: 'relayed', text: 'x' })
      .then(
        (info) => info.response,
        (e: Error & { response?: string }) => e.response ?? e.message,
      );

  beforeAll(async () => {
    tmpfs = mountTmpfs('8m');
    mount = tmpfs.dir;
    dataDir = join(mount, 'data');
    mkdirSync(dataDir);
    const config = loadConfig({ flags: { dataDir, templateTimeout: '500ms' } });
    app = await createApp(config, {
      clock: new FakeClock('2026-03-15T12:00:00.000Z'),
      createDataDir: true,
      checkpointWorker: true,
    });
    const init = await initialize(app.accounts, app.keys, {
      email: 'owner@example.com',
      password: 'owner-password-1',
      org: 'Acme',
      project: 'Web',
      plan: 'UNLIMITED',
      acceptDpa: true,
    });
    key = init.api_key.key!;
    server = createHttpServer(app);
    await server.ready();
    relay = testRelay(app);
    smtpPort = await relay.listen();
  });

  afterAll(async () => {
    await relay?.close();
    await server?.close();
    await app?.close().catch(() => {});
    tmpfs?.unmount();
  });

  it('answers 503 storage_full and 452 4.3.1, is not ready, and recovers within seconds once space is freed', async () => {
    expect((await send('before')).statusCode).toBe(202);
    await expect.poll(() => existsSync(join(dataDir, RESERVE_FILE)), { timeout: 3000 }).toBe(true);

    // Fill the disk; the WAL still has room for a few writes, then they fail.
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      fillDisk(fill());
      const r = await send(`while full ${i}`);
      if (r.statusCode !== 202) refused = r;
    }
    expect(refused?.statusCode).toBe(503);
    expect(refused?.json().error).toMatchObject({ code: 'storage_full' });
    expect(refused?.headers['retry-after']).toBe('30');
    // The reserve went to the checkpoint that empties the WAL; what that freed is taken again.
    // (Not asked of the relay here: the guard's look 250 ms after the refusal may find the WAL's
    // room enough to leave the full state, legitimately, before a slow machine's SMTP session
    // reaches DATA. It is asked below, where the room left is the reserve's alone.)
    expect(existsSync(join(dataDir, RESERVE_FILE))).toBe(false);
    await expect.poll(() => statSync(join(dataDir, 'svc.sqlite-wal')).size, { timeout: 3000 }).toBe(0);
    fillDisk(fill());

    const again = await send('still full');
    expect(again.statusCode).toBe(503);
    expect(again.json().error.code).toBe('storage_full');
    // The reserve the refusal released is for the checkpoint: a small message, which would fit
    // in it, is refused as well rather than written into it.
    expect(await relayed()).toMatch(/^452 4\.3\.1 /);
    const ready = await server.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().data).toMatchObject({ status: 'not_ready', reason: 'storage_full' });
    const metrics = (await server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^svc_storage_full 1$/m);
    expect(metrics).toMatch(/^svc_storage_total_bytes 8388608$/m);
    expect(metrics).toMatch(/^svc_storage_free_bytes \d+$/m);

    // The operator frees space: ready again within seconds, with the reserve back.
    const freedAt = performance.now();
    rmSync(fill());
    await expect
      .poll(async () => (await server.inject({ method: 'GET', url: '/readyz' })).statusCode, {
        timeout: 5000,
        interval: 50,
      })
      .toBe(200);
    const seconds = (performance.now() - freedAt) / 1000;
    expect(seconds).toBeLessThan(3);
    expect(existsSync(join(dataDir, RESERVE_FILE))).toBe(true);
    expect((await send('after')).statusCode).toBe(202);
    expect(await relayed()).toMatch(/^250 /);
    expect((await server.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^svc_storage_full 0$/m);
  });
});
