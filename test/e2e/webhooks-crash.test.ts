import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/lib/sleep.ts';
import { startDnsServer, type DnsServer } from '../peers/dns.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../peers/webhook-receiver.ts';
import { initDataDir, sendMany, spawnServe } from './serve.ts';

// kill -9 while webhook POSTs are in flight, restart: every event reaches the receiver
// (at least once; X-Service-Event-Id lets it drop a repeat), none is lost.
const N = 30;
let dir: string;
let dns: DnsServer;
let receiver: WebhookReceiver;
let key = '';
let child: ChildProcess | undefined;

/** A data dir with an owner, a TEST key, and a webhook on every `simulated` event. */
async function prepareDataDir(): Promise<string> {
  const { app, init } = await initDataDir(join(dir, 'data'));
  await app.webhooks.create(init.project_id, { url: `https://hook.test:${receiver.port}/`, events: ['simulated'] });
  const k = await app.keys.createKey(init.project_id, { name: 'test', env: 'TEST' });
  await app.close();
  return k.key!;
}

function startServer(): Promise<string> {
  const args = ['--dns-servers', dns.server, '--hostname', 'mta.svc.test', '--allow-insecure-webhooks'];
  // The receiver's certificate is signed by a CA of the test's own: the server trusts it as an extra CA.
  const env = { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') };
  const started = spawnServe(join(dir, 'data'), args, { cwd: dir, env });
  child = started.child;
  return started.url;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-hook-crash-'));
  receiver = await startWebhookReceiver();
  writeFileSync(join(dir, 'ca.pem'), receiver.ca);
  dns = await startDnsServer();
  dns.set('hook.test', { A: ['127.0.0.1'] });
  key = await prepareDataDir();
}, 60_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await receiver.close();
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a crash while sending webhooks', () => {
  it('loses no event: after a restart every one reaches the receiver', async () => {
    // The receiver answers the first few events and holds the others unanswered, so
    // the kill always finds attempts in flight, however fast this machine is.
    const quick = new Set<string>();
    receiver.respond = (hook) => {
      const id = String(hook.headers['x-service-event-id']);
      if (quick.size < 5) quick.add(id);
      return quick.has(id) ? { status: 200 } : { status: 200, delayMs: 60_000 };
    };
    const base = await startServer();
    await sendMany(base, key, N);
    for (let i = 0; i < 500 && receiver.requests.length < 8; i++) await sleep(10);
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child!.kill('SIGKILL');
    await exited;
    const received = receiver.requests.length;
    const unanswered = new Set(
      receiver.requests.filter((r) => r.answered === undefined).map((r) => String(r.headers['x-service-event-id'])),
    );
    expect(unanswered.size).toBeGreaterThan(0);

    receiver.respond = () => ({ status: 200 });
    await startServer();
    const acknowledged = () =>
      new Set(receiver.requests.filter((r) => r.answered === 200).map((r) => String(r.headers['x-service-event-id'])));
    for (let i = 0; i < 600 && acknowledged().size < N; i++) await sleep(25);
    expect(acknowledged().size).toBe(N);
    // Every event left in flight by the crash was sent again after the restart.
    const after = new Set(receiver.requests.slice(received).map((r) => String(r.headers['x-service-event-id'])));
    expect([...unanswered].filter((id) => !after.has(id))).toEqual([]);
    // Every event's body is the same on a repeat: the receiver can de-duplicate by id.
    const bodies = new Map<string, Set<string>>();
    for (const r of receiver.requests) {
      const id = String(r.headers['x-service-event-id']);
      bodies.set(id, (bodies.get(id) ?? new Set()).add(r.body));
    }
    expect([...bodies.values()].every((b) => b.size === 1)).toBe(true);
  });
});
