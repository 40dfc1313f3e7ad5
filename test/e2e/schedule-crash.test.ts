import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/lib/sleep.ts';
import { startDnsServer, type DnsServer } from '../peers/dns.ts';
import { startMxPeer, type MxPeer } from '../peers/mx.ts';
import { insertSigningDomain } from '../signing-domain.ts';
import { initDataDir, spawnServe } from './serve.ts';

// Scheduled sending across kill -9 (issue 35): emails scheduled a few seconds ahead, the server
// killed before their time and started again; each goes out once, after its time, and the one
// cancelled before the kill never does. The schedule is the queue (next_attempt_at), on disk.
const N = 20;
let dir: string;
let dns: DnsServer;
let mx: MxPeer;
let key = '';
let child: ChildProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-schedule-crash-'));
  dns = await startDnsServer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  mx = await startMxPeer();
  const { app, init } = await initDataDir(join(dir, 'data'));
  insertSigningDomain(app.db, {
    organizationId: init.organization_id,
    projectId: init.project_id,
    name: 'sender.test',
    selector: 'svc1',
  });
  key = (await app.keys.createKey(init.project_id, { name: 'live', env: 'LIVE' })).key!;
  await app.close();
}, 60_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await mx.close();
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
});

function startServer(): Promise<string> {
  const args = ['--dns-servers', dns.server, '--mx-port', String(mx.port), '--hostname', 'mta.svc.test'];
  const started = spawnServe(join(dir, 'data'), [...args, '--workers', '1'], { cwd: dir });
  child = started.child;
  return started.url;
}

const call = (base: string, method: string, path: string, body?: object) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

describe('a schedule across kill -9', () => {
  it('sends each scheduled email once, after its time, and not the cancelled one', async () => {
    let base = await startServer();
    // Far enough ahead for the sends, the kill and a restart from source under load.
    const at = Date.now() + 5000;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const res = await call(base, 'POST', '/v1/emails', {
        from: 'n@sender.test',
        to: [`s${i}@dest.test`],
        subject: `m${i}`,
        text: 'hello',
        scheduled_at: new Date(at).toISOString(),
      });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { data: { id: string } }).data.id);
    }
    expect((await call(base, 'POST', `/v1/emails/${ids[0]}/cancel`)).status).toBe(200);
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child!.kill('SIGKILL');
    await exited;
    expect(Date.now()).toBeLessThan(at);
    expect(mx.received).toHaveLength(0);

    base = await startServer();
    const statuses = async () => {
      const res = await call(base, 'GET', '/v1/emails?limit=100');
      return ((await res.json()) as { data: { id: string; status: string }[] }).data;
    };
    const until = Date.now() + 30_000;
    let list = await statuses();
    while (list.some((e) => e.status === 'QUEUED' || e.status === 'SENDING') && Date.now() < until) {
      await sleep(50);
      list = await statuses();
    }
    const byId = new Map(list.map((e) => [e.id, e.status]));
    expect(ids.map((id) => byId.get(id))).toEqual(['CANCELED', ...ids.slice(1).map(() => 'DELIVERED')]);
    expect(mx.received.flatMap((m) => m.to).sort()).toEqual(
      Array.from({ length: N - 1 }, (_, i) => `s${i + 1}@dest.test`).sort(),
    );
    expect(Math.min(...mx.received.map((m) => m.dataEndedAt))).toBeGreaterThanOrEqual(at);
  });
});
