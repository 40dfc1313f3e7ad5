import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, startServe, type Run } from './cli-runner.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { HOST, HOST_IPV4, publish } from './domains-helpers.ts';

// `svc domains ...` as a user runs it (cli.md), checking against a loopback DNS server.

let dir: string;
let dns: DnsServer;

/** Runs the CLI with the server's host name set. */
const svc = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  runSvc(dir, args, { SVC_HOSTNAME: HOST, ...env });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-domains-'));
  dns = await startDnsServer();
  dns.set(HOST, { A: [HOST_IPV4] });
  const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789', '--org', 'Acme'];
  expect((await svc([...init, '--project', 'Web', '--plan', 'FREE'])).code).toBe(0);
});
afterAll(async () => {
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('svc domains', () => {
  it('add prints {id, name, status, records, checks} with --json, and binds with --project', async () => {
    const r = await svc(['domains', 'add', 'Example.com', '--org', 'Acme', '--project', 'Web', '--json'], {
      SVC_DNS_SERVERS: dns.server,
    });
    expect(r.code).toBe(0);
    const d = r.json();
    expect(d).toMatchObject({ id: expect.any(String), name: 'example.com', status: 'PENDING' });
    // Looked up at once: nothing is published yet, and each check says so.
    expect(d.checks.map((c: any) => [c.purpose, c.ok])).toEqual([
      ['dkim', false],
      ['spf', false],
      ['return-path', false],
      ['dmarc', false],
    ]);
    expect(d.checks[1].reason).toBe('TXT bounces.example.com does not exist (NXDOMAIN)');
    expect(d.records.map((x: any) => x.purpose)).toEqual(['dkim', 'spf', 'return-path', 'dmarc']);
    expect(Object.keys(d.records[0]).sort()).toEqual(['name', 'purpose', 'type', 'value']);
    expect(d.records[1].value).toBe(`v=spf1 a:${HOST} ~all`);
    expect(d.project_ids).toHaveLength(1);
  });

  it('show prints the records as a table, what DNS held at the last check, and what to run next', async () => {
    const r = await svc(['domains', 'show', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^example\.com {2}PENDING/);
    expect(r.stdout).toMatch(/TYPE +NAME +PURPOSE +VALUE/);
    expect(r.stdout).toContain(`MX    bounces.example.com`);
    expect(r.stdout).toMatch(/What DNS held at \S+ \(DKIM and SPF are required\):/);
    expect(r.stdout).toContain('✗ TXT bounces.example.com (spf): TXT bounces.example.com does not exist (NXDOMAIN)');
    expect(r.stdout).toContain('Publish what fails above, then run: svc domains verify example.com');
  });

  it('refuses a second domain on FREE (exit 1, plan_limit_exceeded), a bad name, and a missing --org', async () => {
    const r = await svc(['domains', 'add', 'second.example', '--org', 'Acme']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: plan_limit_exceeded: plan FREE allows 1 domain/);
    const j = await svc(['domains', 'add', 'second.example', '--org', 'Acme', '--json']);
    expect(j.json().error.code).toBe('plan_limit_exceeded');
    const bad = await svc(['domains', 'add', 'not_a.domain', '--org', 'Acme']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('request_validation_failed');
    expect((await svc(['domains', 'add', 'x.example'])).code).toBe(2);
  });

  it('verify asks the resolver of --dns-servers and prints each check with its reason', async () => {
    const r = await svc(['domains', 'verify', 'example.com', '--dns-servers', dns.server]);
    // Not verified: exit 1, so `until svc domains verify …; do sleep 60; done` waits.
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('example.com is PENDING, not verified: see the checks above\n');
    expect(r.stdout).toMatch(/^example\.com {2}PENDING/);
    expect(r.stdout).toContain('✗ TXT bounces.example.com (spf): TXT bounces.example.com does not exist (NXDOMAIN)');
    expect(r.stdout).toContain('(recommended, not required)');
  });

  it('verify reads SVC_DNS_SERVERS too, and verifies once the records are published', async () => {
    const shown = (await svc(['domains', 'show', 'example.com', '--json'])).json();
    publish(dns, shown);
    const r = await svc(['domains', 'verify', 'example.com', '--json'], { SVC_DNS_SERVERS: dns.server });
    expect(r.code).toBe(0);
    const d = r.json();
    expect(d.status).toBe('VERIFIED');
    expect(d.checks.map((c: any) => c.ok)).toEqual([true, true, true, true]);
    expect(Object.keys(d.checks[0]).sort()).toEqual(['found', 'name', 'ok', 'purpose', 'reason', 'type']);
    const human = await svc(['domains', 'show', 'example.com']);
    expect(human.stdout).toContain('✓ TXT svc');
    expect(human.stdout).not.toContain('warning:');
  });

  it('warns in add, show and verify when the host name is not fully qualified, saying to set --hostname', async () => {
    const bare = { SVC_HOSTNAME: 'vm' };
    expect((await svc(['orgs', 'create', '--name', 'Bare', '--owner', 'o@example.com'])).code).toBe(0);
    const add = await svc(['domains', 'add', 'bare.example', '--org', 'Bare'], bare);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('v=spf1 a:vm ~all');
    expect(add.stderr).toMatch(/^warning: the host name "vm" is not a fully qualified domain name.*--hostname/);
    expect((await svc(['domains', 'delete', 'bare.example'])).code).toBe(0);
    const show = await svc(['domains', 'show', 'example.com'], bare);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('a:vm');
    expect(show.stderr).toMatch(/^warning: the host name "vm" is not a fully qualified domain name.*--hostname/);
    const json = await svc(['domains', 'show', 'example.com', '--json'], bare);
    expect(json.json().name).toBe('example.com');
    expect(json.stderr).toContain('warning: the host name "vm"');
    const verify = await svc(['domains', 'verify', 'example.com', '--dns-servers', dns.server], bare);
    expect(verify.stderr).toContain('warning: the host name "vm"');
    expect((await svc(['domains', 'show', 'example.com'])).stderr).toBe('');
  });

  it('bind, list, unbind and delete', async () => {
    const p = await svc(['projects', 'create', '--org', 'Acme', '--name', 'Api', '--json']);
    const bound = await svc(['domains', 'bind', 'example.com', '--project', 'Api', '--json']);
    expect(bound.code).toBe(0);
    expect(bound.json().project_ids).toContain(p.json().id);
    const list = await svc(['domains', 'list', '--org', 'Acme', '--json']);
    expect(list.json().map((d: any) => [d.name, d.status])).toEqual([['example.com', 'VERIFIED']]);
    expect((await svc(['domains', 'list', '--org', 'Acme'])).stdout).toMatch(/example\.com +VERIFIED/);
    const unbound = await svc(['domains', 'unbind', 'example.com', '--project', 'Api', '--json']);
    expect(unbound.json().project_ids).not.toContain(p.json().id);
    const del = await svc(['domains', 'delete', 'example.com']);
    expect(del.stdout).toMatch(/^deleted domain example\.com/);
    const gone = await svc(['domains', 'show', 'example.com']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('not_found');
  });
});

describe('the host name the admin commands use', () => {
  let own: string;
  const env = { SVC_HOSTNAME: '' };
  beforeAll(async () => {
    own = mkdtempSync(join(tmpdir(), 'svc-cli-hostname-'));
    const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789', '--org', 'Acme'];
    expect((await runSvc(own, init, env)).code).toBe(0);
  });
  afterAll(() => rmSync(own, { recursive: true, force: true }));

  /** `svc serve` until it says it is serving, then SIGTERM. */
  async function serveOnce(args: string[]): Promise<void> {
    const served = await startServe(own, args, env);
    expect(await served.stop()).toBe(0);
    expect(served.log()).toContain('"hostname":"mta.example.test"');
  }

  it('is the one `svc serve` last ran with when a command is given none, so records and checks match the server', async () => {
    const before = await runSvc(own, ['domains', 'add', 'first.example', '--org', 'Acme', '--json'], env);
    expect(before.json().records[1].value).not.toContain('mta.example.test');
    await serveOnce(['--hostname', 'MTA.example.test.']);
    const shown = await runSvc(own, ['domains', 'show', 'first.example', '--json'], env);
    expect(shown.json().records[1].value).toBe('v=spf1 a:mta.example.test ~all');
    expect(shown.json().records[2].value).toBe('10 mta.example.test');
    const human = await runSvc(own, ['domains', 'show', 'first.example'], env);
    expect(human.stdout).toContain(
      'Records to publish (SPF and the return path name the server host mta.example.test):',
    );
  });

  it('gives way to --hostname or SVC_HOSTNAME given to the command', async () => {
    const flag = await runSvc(own, ['domains', 'show', 'first.example', '--hostname', 'other.test', '--json'], env);
    expect(flag.json().records[1].value).toBe('v=spf1 a:other.test ~all');
    const viaEnv = await runSvc(own, ['domains', 'show', 'first.example', '--json'], { SVC_HOSTNAME: 'env.test' });
    expect(viaEnv.json().records[1].value).toBe('v=spf1 a:env.test ~all');
  });

  it('and so is its resolver: verify given no --dns-servers asks the one `svc serve` was given', async () => {
    const noResolver = { ...env, SVC_DNS_SERVERS: '' };
    await serveOnce(['--hostname', 'mta.example.test', '--dns-servers', dns.server]);
    const asked = dns.queries.length;
    const r = await runSvc(own, ['domains', 'verify', 'first.example', '--json'], noResolver);
    expect(r.json().checks.length).toBeGreaterThan(0);
    expect(dns.queries.slice(asked)).toContain('TXT bounces.first.example');
    // A server started on the system's resolver leaves the commands on it too.
    await serveOnce(['--hostname', 'mta.example.test']);
    const before = dns.queries.length;
    await runSvc(own, ['domains', 'verify', 'first.example', '--json'], noResolver);
    expect(dns.queries.length).toBe(before);
  });
});

describe('svc serve with a host name that is not fully qualified', () => {
  it('warns at start, saying to set --hostname', async () => {
    const own = mkdtempSync(join(tmpdir(), 'svc-cli-bare-host-'));
    try {
      const served = await startServe(own, ['--hostname', 'vm']);
      expect(await served.stop()).toBe(0);
      const warning = served
        .log()
        .split('\n')
        .find((l) => l.includes('not a fully qualified domain name'));
      expect(JSON.parse(warning!)).toMatchObject({
        level: 40,
        hostname: 'vm',
        msg: expect.stringContaining('--hostname'),
      });
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('svc serve stopping while a domain check waits on DNS', () => {
  it('exits right after `stopped`, with no error after it', async () => {
    const own = mkdtempSync(join(tmpdir(), 'svc-cli-silent-dns-'));
    // A resolver that never answers, and counts each question it is asked.
    const asks = new Map<string, number>();
    const silent = createSocket('udp4').on('message', (m: Buffer) => {
      const question = m.subarray(12).toString('hex');
      asks.set(question, (asks.get(question) ?? 0) + 1);
    });
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const dnsServers = `127.0.0.1:${silent.address().port}`;
    try {
      const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789', '--org', 'Acme'];
      expect((await runSvc(own, init)).code).toBe(0);
      expect((await runSvc(own, ['domains', 'add', 'example.com', '--org', 'Acme'])).code).toBe(0);
      const asked = new Promise((resolve) => silent.once('message', resolve));
      const served = await startServe(own, ['--dns-servers', dnsServers, '--hostname', HOST]);
      await asked;
      expect(await served.stop()).toBe(0);
      // The resolver asks a question again only once its first try timed out (2 s): a server
      // that waited on the lookup would still be there to ask. No clock of ours is read.
      expect([...asks.values()].every((n) => n === 1)).toBe(true);
      const afterStopped = served.log().slice(served.log().indexOf('"msg":"stopped"'));
      expect(afterStopped.trim().split('\n')).toHaveLength(1);
      expect(served.log()).not.toContain('"level":50');
    } finally {
      silent.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});
