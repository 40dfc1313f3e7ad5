import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { runSvc, startServe, storeEnv, type Run } from './cli-runner.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';

// `svc webhooks ...` as a user runs it (cli.md). Targets are looked up on a loopback
// DNS server that answers NXDOMAIN for any name it does not hold: nothing leaves loopback.

let dir: string;
let dns: DnsServer;
let receiver: WebhookReceiver;

/** Runs the CLI resolving with the loopback DNS server. */
const svc = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  runSvc(dir, args, { SVC_DNS_SERVERS: dns.server, ...env });
/** `svc webhooks create --project Web --url URL --events EVENTS [more]`. */
const create = (url: string, events: string, ...more: string[]): Promise<Run> =>
  svc(['webhooks', 'create', '--project', 'Web', '--url', url, '--events', events, ...more]);

const SECRET = /^whsec_[0-9a-f]{64}$/;
const URL_ = 'https://example.com/hooks/svc';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-webhooks-'));
  [dns, receiver] = await Promise.all([startDnsServer(), startWebhookReceiver()]);
  dns.set('hook.test', { A: ['127.0.0.1'] });
  writeFileSync(join(dir, 'ca.pem'), receiver.ca);
  const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789', '--org', 'Acme'];
  expect((await svc([...init, '--project', 'Web'])).code).toBe(0);
});
afterAll(async () => {
  await Promise.all([dns.close(), receiver.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('svc webhooks', () => {
  let id = '';

  it('create prints the webhook with its secret, once', async () => {
    const r = await create(URL_, 'delivered, bounced');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`url: ${URL_}`);
    expect(r.stdout).toContain('events: ["delivered","bounced"]');
    expect(r.stdout).toMatch(/^secret: whsec_[0-9a-f]{64}$/m);
    // The "shown once" note is for a person at a terminal, not for a script reading the output.
    expect(r.stderr).toBe('');
    const j = await create(URL_, 'sent', '--json');
    expect(j.code).toBe(0);
    const w = j.json();
    expect(w).toMatchObject({ url: URL_, events: ['sent'], is_active: true, auto_disabled: false });
    expect(w.secret).toMatch(SECRET);
    id = w.id;
  });

  it('list and show never print the secret', async () => {
    const list = await svc(['webhooks', 'list', '--project', 'Web', '--json']);
    expect(list.code).toBe(0);
    expect(list.json()).toHaveLength(2);
    expect(list.stdout).not.toContain('whsec_');
    const table = await svc(['webhooks', 'list', '--project', 'Web']);
    expect(table.stdout).toMatch(/^ID +URL +EVENTS +IS_ACTIVE/);
    expect(table.stdout).toContain('delivered,bounced');
    const show = await svc(['webhooks', 'show', id, '--project', 'Web', '--json']);
    expect(show.code).toBe(0);
    expect(show.json()).toMatchObject({ id, url: URL_, events: ['sent'] });
    expect(show.json()).not.toHaveProperty('secret');
    expect((await svc(['webhooks', 'show', id, '--project', 'Web'])).stdout).not.toContain('whsec_');
  });

  it('update changes only the flags given', async () => {
    const r = await svc(['webhooks', 'update', id, '--project', 'Web', '--events', 'sent,failed', '--active', 'false']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('is_active: false');
    const w = (await svc(['webhooks', 'show', id, '--project', 'Web', '--json'])).json();
    expect(w).toMatchObject({ url: URL_, events: ['sent', 'failed'], is_active: false });
    const back = await svc(['webhooks', 'update', id, '--project', 'Web', '--active', 'true', '--json']);
    expect(back.json().is_active).toBe(true);
  });

  it('rotate-secret prints a new secret', async () => {
    const before = (await svc(['webhooks', 'rotate-secret', id, '--project', 'Web', '--json'])).json();
    const r = await svc(['webhooks', 'rotate-secret', id, '--project', 'Web', '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ id, url: URL_ });
    expect(r.json().secret).toMatch(SECRET);
    expect(r.json().secret).not.toBe(before.secret);
  });

  it('deliveries lists none yet', async () => {
    const r = await svc(['webhooks', 'deliveries', id, '--project', 'Web', '--status', 'failed', '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual([]);
    expect((await svc(['webhooks', 'deliveries', id, '--project', 'Web'])).stdout).toBe('(none)\n');
  });

  it('test against a name that does not resolve exits 1 with the error; nothing left loopback', async () => {
    const hook = await create('https://hooks.invalid/', '*');
    const hookId = /^id: (\S+)$/m.exec(hook.stdout)![1]!;
    const r = await svc(['webhooks', 'test', hookId, '--project', 'Web']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('success: false');
    expect(r.stdout).toContain('http_status: 0');
    expect(r.stderr).toBe(
      'test.ping to https://hooks.invalid/ failed: ENOTFOUND: A hooks.invalid does not exist (NXDOMAIN)\n',
    );
    expect(dns.queries).toContain('A hooks.invalid');
    // --dns-servers does what SVC_DNS_SERVERS does.
    const j = await svc(['webhooks', 'test', hookId, '--project', 'Web', '--dns-servers', dns.server, '--json'], {
      SVC_DNS_SERVERS: '',
    });
    expect(j.code).toBe(1);
    expect(j.json()).toMatchObject({ success: false, http_status: 0, error: expect.stringContaining('NXDOMAIN') });
    await svc(['webhooks', 'delete', hookId, '--project', 'Web']);
  });

  it('test refuses a name that resolves to loopback when no server allows it; nothing is sent', async () => {
    const url = `https://hook.test:${receiver.port}/in`;
    const created = await create(url, '*', '--json');
    const hookId = created.json().id as string;
    const env = { NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') };
    // No server with --allow-insecure-webhooks ran here: the guard refuses 127.0.0.1 before anything is sent.
    const refused = await svc(['webhooks', 'test', hookId, '--project', 'Web', '--json'], env);
    expect(refused.code).toBe(1);
    expect(refused.json().error).toContain('loopback');
    expect(receiver.requests).toHaveLength(0);
    // The server's setting is not a flag of the command (it would let the command disagree with the server).
    const flag = await svc(['webhooks', 'test', hookId, '--project', 'Web', '--allow-insecure-webhooks'], env);
    expect(flag.code).toBe(2);
    await svc(['webhooks', 'delete', hookId, '--project', 'Web']);
  });

  it('deliveries lists an attempt; redeliver queues a new one that the server sends with the same body', async () => {
    const url = `https://hook.test:${receiver.port}/again`;
    const created = await create(url, 'simulated', '--json');
    const hookId = created.json().id as string;
    // The first attempt, as `svc serve` would make it: the same app, on the same store, sending once.
    const database = (await storeEnv(dir)).SVC_DATABASE_URL;
    const server = () =>
      createApp(
        loadConfig({
          flags: {
            dataDir: join(dir, 'data'),
            ...(database ? { database } : {}),
            allowInsecureWebhooks: true,
            dnsServers: dns.server,
          },
        }),
        { webhookCa: [receiver.ca] },
      );
    let app = await server();
    const project = await app.accounts.getProject('Web');
    const key = await app.keys.createKey(project.id, { name: 'cli-test', env: 'TEST' });
    const sender = await app.keys.authenticate(key.key);
    await app.emails.send(sender, { from: 'a@example.com', to: ['b@example.net'], subject: 'S', text: 'T' });
    await app.webhookDispatcher().runOnce();
    await app.close();
    const first = receiver.requests.filter((r) => r.path === '/again');
    expect(first).toHaveLength(1);

    const list = await svc(['webhooks', 'deliveries', hookId, '--project', 'Web', '--json']);
    expect(list.code).toBe(0);
    const [record] = list.json() as { id: string; status: string; attempt: number }[];
    expect(record).toMatchObject({ status: 'succeeded', attempt: 1 });
    const r = await svc(['webhooks', 'redeliver', hookId, record!.id, '--project', 'Web', '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ status: 'pending', event_id: expect.any(String) });

    app = await server();
    await app.webhookDispatcher().runOnce();
    await app.close();
    const again = receiver.requests.filter((r) => r.path === '/again');
    expect(again).toHaveLength(2);
    expect(again[1]!.body).toBe(again[0]!.body);
    expect(again[1]!.headers['x-service-event-id']).toBe(again[0]!.headers['x-service-event-id']);
    const after = await svc(['webhooks', 'deliveries', hookId, '--project', 'Web', '--json']);
    expect((after.json() as { status: string }[]).map((d) => d.status)).toEqual(['succeeded', 'succeeded']);
    await svc(['webhooks', 'delete', hookId, '--project', 'Web']);
  });

  it('redeliver refuses an unknown delivery (exit 1, not_found)', async () => {
    const missing = '0192f4c2-1a2b-7c3d-8e4f-5a6b7c8d9e0f';
    const r = await svc(['webhooks', 'redeliver', id, missing, '--project', 'Web']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: not_found: no delivery ${missing}\n`);
  });

  it('delete removes the webhook and prints it', async () => {
    const r = await svc(['webhooks', 'delete', id, '--project', 'Web', '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ id, url: URL_ });
    expect(r.json()).not.toHaveProperty('secret');
    const gone = await svc(['webhooks', 'show', id, '--project', 'Web']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`error: not_found: no webhook ${id}\n`);
  });

  it('refuses an invalid URL with the reason (exit 1)', async () => {
    const http = await create('http://example.com/h', 'sent');
    expect(http.code).toBe(1);
    expect(http.stderr).toMatch(
      /^error: request_validation_failed: The webhook url is refused: the URL must use https/,
    );
    const local = await create('https://127.0.0.1/', 'sent');
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('loopback');
    const j = await create('nope', 'sent', '--json');
    expect(j.code).toBe(1);
    expect(j.json().error).toMatchObject({ code: 'request_validation_failed', details: { reason: 'invalid_url' } });
    const events = await create(URL_, 'sent,nope');
    expect(events.code).toBe(1);
    expect(events.stderr).toContain('request_validation_failed');
  });

  it.each([
    [['webhooks', 'create', '--url', URL_, '--events', 'sent']],
    [['webhooks', 'list']],
    [['webhooks', 'create', '--project', 'Web', '--events', 'sent']],
    [['webhooks', 'update', '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e', '--project', 'Web']],
    [['webhooks', 'update', '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e', '--project', 'Web', '--active', 'yes']],
    [['webhooks', 'redeliver', '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e', '--project', 'Web']],
  ])('exits 2 with usage for %j', async (args) => {
    const r = await svc(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: /);
  });
});

describe('svc webhooks and svc domains beside a server', () => {
  let own: string;
  let plain: Server;
  const pings: { headers: Record<string, unknown>; body: string }[] = [];
  beforeAll(async () => {
    own = mkdtempSync(join(tmpdir(), 'svc-cli-beside-'));
    plain = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        pings.push({ headers: req.headers, body });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => plain.close(resolve));
    rmSync(own, { recursive: true, force: true });
  });

  it('work as the server does: its --allow-insecure-webhooks and its resolver, with no flag of their own', async () => {
    // No resolver or guard of the commands' own: whatever they use comes from the server.
    const bare = { SVC_DNS_SERVERS: '', SVC_ALLOW_INSECURE_WEBHOOKS: '' };
    const run = (args: string[]) => runSvc(own, args, bare);
    const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789', '--org', 'Acme'];
    expect((await run([...init, '--project', 'Web'])).code).toBe(0);
    expect((await run(['domains', 'add', 'beside.example', '--org', 'Acme'])).code).toBe(0);
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/hooks`;
    const createArgs = ['webhooks', 'create', '--project', 'Web', '--url', url, '--events', '*', '--json'];
    const before = await run(createArgs);
    expect(before.code).toBe(1);
    expect(before.json().error.code).toBe('request_validation_failed');

    const served = await startServe(own, ['--allow-insecure-webhooks', '--dns-servers', dns.server], bare);
    try {
      const created = await run(createArgs);
      expect(created.code, created.stderr).toBe(0);
      const hookId = created.json().id as string;
      const tested = await run(['webhooks', 'test', hookId, '--project', 'Web', '--json']);
      expect(tested.json()).toEqual({ success: true, http_status: 200, error: null });
      expect(pings).toHaveLength(1);
      expect(JSON.parse(pings[0]!.body)).toMatchObject({ id: 'evt_test_ping', type: 'test.ping' });
    } finally {
      expect(await served.stop()).toBe(0);
    }
    // The settings are the server's as it last ran: after it stopped, the commands still agree with it.
    const asked = dns.queries.length;
    const verified = await run(['domains', 'verify', 'beside.example', '--json']);
    expect(verified.json().checks.length).toBeGreaterThan(0);
    // SPF is looked up where svc's record is: the return-path name (issue 28).
    expect(dns.queries.slice(asked)).toContain('TXT bounces.beside.example');
  }, 90_000);
});
