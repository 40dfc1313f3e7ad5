import Database from 'better-sqlite3';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/lib/sleep.ts';
import { startDnsServer, type DnsServer } from '../peers/dns.ts';
import { startMxPeer, type MxPeer } from '../peers/mx.ts';
import { insertSigningDomain } from '../signing-domain.ts';
import { initDataDir, sendMany, spawnServe } from './serve.ts';

// kill -9 while delivering, restart: every accepted email reaches a final status, none is lost.
const N = 40;
let dir: string;
let dns: DnsServer;
let mx: MxPeer;
let key = '';
let child: ChildProcess | undefined;

/** A data dir with an owner, a verified signing domain bound to the project, and a LIVE key. */
async function prepareDataDir(): Promise<string> {
  const { app, init } = await initDataDir(join(dir, 'data'));
  insertSigningDomain(app.db, {
    organizationId: init.organization_id,
    projectId: init.project_id,
    name: 'sender.test',
    selector: 'svc1',
  });
  const k = await app.keys.createKey(init.project_id, { name: 'live', env: 'LIVE' });
  await app.close();
  return k.key!;
}

function startServer(): Promise<string> {
  const args = ['--dns-servers', dns.server, '--mx-port', String(mx.port), '--hostname', 'mta.svc.test'];
  const started = spawnServe(join(dir, 'data'), [...args, '--workers', '1'], { cwd: dir });
  child = started.child;
  return started.url;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
  dns = await startDnsServer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  // Slow answers to DATA keep transactions in flight when the server is killed.
  mx = await startMxPeer({ dataDelayMs: 40 });
  key = await prepareDataDir();
}, 60_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await mx.close();
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a crash while delivering', () => {
  it('loses no accepted email: after a restart all reach DELIVERED', async () => {
    let base = await startServer();
    const ids = await sendMany(base, key, N);
    for (let i = 0; i < 500 && mx.received.length < 3; i++) await sleep(10);
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child!.kill('SIGKILL');
    await exited;
    const beforeRestart = mx.received.length;
    expect(beforeRestart).toBeLessThan(N);
    // What the killed server had claimed and not recorded: only these may reach the peer twice.
    const db = new Database(join(dir, 'data', 'svc.sqlite'));
    const { unrecorded } = db
      .prepare<[], { unrecorded: number }>("SELECT count(*) AS unrecorded FROM recipients WHERE status = 'SENDING'")
      .get()!;
    db.close();

    base = await startServer();
    const statuses = async () => {
      const res = await fetch(`${base}/v1/emails?limit=100`, { headers: { authorization: `Bearer ${key}` } });
      return ((await res.json()) as { data: { id: string; status: string }[] }).data;
    };
    let list = await statuses();
    for (let i = 0; i < 400 && list.some((e) => e.status !== 'DELIVERED'); i++) {
      await sleep(25);
      list = await statuses();
    }
    expect(list.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect(list.every((e) => e.status === 'DELIVERED')).toBe(true);
    const got = new Set(mx.received.flatMap((m) => m.to));
    for (let i = 0; i < N; i++) expect(got.has(`r${i}@dest.test`)).toBe(true);
    // Duplicates are possible only for messages sent and not yet recorded at the kill.
    expect(mx.received.length - N).toBeLessThanOrEqual(unrecorded);
  });
});
