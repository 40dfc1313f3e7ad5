import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, startDestinations, type DeliveryEnv } from './delivery-helpers.ts';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { runSvc, SVC_ENTRY } from './cli-runner.ts';
import { testStore } from './harness.ts';
import { openReadOnly } from '../src/store/db.ts';
import { createTopReader } from '../src/top/repo.ts';
import { parseFilterText } from '../src/top/filter.ts';
import { emailDetailSchema, snapshotSchema } from '../src/top/schema.ts';
import { layout, sparkline } from '../src/tui/top.ts';
import { startHeartbeat } from '../src/nodes/heartbeat.ts';
import { createLogger } from '../src/lib/logger.ts';

// svc top (issue 16, item 1): the snapshot of the data dir (read-only, beside a server that
// has the database open), the same readings through GET /v1/top with a READ_ONLY key, and
// the live Ink view driven in a pseudo-terminal.

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let url: string;
let readOnlyKey: string;
let delivered: string;
let waiting: string;

beforeAll(async () => {
  ({ dns, mx } = await startDestinations(['dest.test', 'slow.test']));
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
  mx.behaviour.set('later@slow.test', { rcpt: [451, '4.7.1 Greylisted, please try again later'] });
  delivered = await d.send(['ok@dest.test'], { tags: ['welcome'] });
  waiting = await d.send(['later@slow.test'], { subject: 'Waits' });
  await settle(d.env);
  await d.env.server.listen({ host: '127.0.0.1', port: 0 });
  const address = d.env.server.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  readOnlyKey = await d.env.key({ env: 'LIVE', permissions: 'READ_ONLY' });
});

afterAll(async () => {
  await d.env.close();
  await mx.close();
  await dns.close();
});

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('svc top, outside a terminal', () => {
  it('prints the queue, the throughput, the destinations and the latest emails, as JSON and text', async () => {
    const run = await runSvc(d.env.dir, ['top', '--json'], d.env.cliEnv);
    expect(run.code, run.stderr).toBe(0);
    const s = run.json();
    expect(s.project_id).toBeNull();
    expect(s.queue).toEqual({ recipients: 1, oldest_seconds: expect.any(Number) });
    // The CLI reads the real clock, so the test clock's last minute is long gone: only what waits is left.
    expect(s.destinations).toHaveLength(1);
    expect(s.destinations[0]).toMatchObject({ domain: 'slow.test', waiting: 1, deferred: 1, delivered: 0 });
    expect(s.destinations[0]).toMatchObject({ bounced: 0, throttled: false, concurrency: null, paused_until: null });
    expect(s.latest.map((e: { id: string }) => e.id).slice(0, 2)).toEqual([waiting, delivered]);
    expect(s.latest[0]).toMatchObject({ status: 'SENDING', to: ['later@slow.test'], subject: 'Waits' });
    expect(s.webhooks).toEqual({ pending_events: 0, failed_last_hour: 0, auto_disabled: [] });
    expect(s.relay).toEqual({ nodes: 0, sessions: 0 });
    expect(s.filter).toEqual({});
    expect(run.stderr).toBe('');

    const text = await runSvc(d.env.dir, ['top'], d.env.cliEnv);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^svc top — \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · whole server\n/);
    expect(text.stdout).toMatch(/queue 1 waiting, oldest \d+ s · no server running/);
    expect(text.stdout).toMatch(/destination\s+waiting\s+deferred\s+deliv\/min\s+bounce\/min/);
    expect(text.stdout).toMatch(/slow\.test\s+1\s+1\s+0\s+0/);
    expect(text.stdout).toContain('webhooks 0 pending, 0 failed in the last hour, 0 switched off');
    for (const line of text.stdout.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('filters the latest emails by status, recipient or tag, and refuses a filter the list would refuse', async () => {
    const ids = async (filter: string) => {
      const run = await runSvc(d.env.dir, ['top', '--json', '--filter', filter], d.env.cliEnv);
      expect(run.code, run.stderr).toBe(0);
      return run.json().latest.map((e: { id: string }) => e.id);
    };
    expect(await ids('delivered')).toEqual([delivered]);
    expect(await ids('sending')).toEqual([waiting]);
    expect(await ids('OK@dest.test')).toEqual([delivered]);
    expect(await ids('welcome')).toEqual([delivered]);
    expect(await ids('tag:welcome sending')).toEqual([]);
    const text = await runSvc(d.env.dir, ['top', '--filter', 'bounced'], d.env.cliEnv);
    expect(text.stdout).toContain('latest emails (bounced):');

    const bad = await runSvc(d.env.dir, ['top', '--filter', `tag:${'x'.repeat(300)}`], d.env.cliEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --filter tag: /);
    expect(parseFilterText('Bounced someone@example.com news')).toEqual({
      status: 'BOUNCED',
      to_email: 'someone@example.com',
      tag: 'news',
    });
  });

  it.skipIf(testStore() === 'postgres')('exits 1 with one clear line on a data dir that does not exist', async () => {
    const run = await runSvc(d.env.dir, ['top'], { SVC_DATA_DIR: `${d.env.dir}/nope` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no svc data dir at/);
  });
});

/** svc top's reader as another process has it: the file opened read-only, or the database. */
function topReader() {
  if (d.env.store === 'postgres') return { reader: d.env.app.topReader(), close: () => {} };
  const db = openReadOnly(d.env.dir);
  return { reader: createTopReader(db, { clock: d.env.clock }), close: () => db.close() };
}

describe('the readings of svc top, on the test clock', () => {
  it('counts the last minute per second and per destination, and this hour', async () => {
    const { reader, close } = topReader();
    try {
      const s = await reader.snapshot();
      expect(s.this_hour).toMatchObject({ queued: 2, delivered: 1 });
      expect(s.last_minute).toMatchObject({ queued: 2, delivered: 1, sending: 2 });
      expect(s.previous_hour).toEqual({});
      expect(s.per_second.accepted).toHaveLength(60);
      expect(sum(s.per_second.accepted)).toBe(2);
      expect(sum(s.per_second.delivered)).toBe(1);
      expect(sum(s.per_second.bounced)).toBe(0);
      // Per destination: dest.test took one in the last minute, slow.test has one deferred.
      expect(s.destinations.map((x) => [x.domain, x.waiting, x.deferred, x.delivered, x.bounced])).toEqual([
        ['slow.test', 1, 1, 0, 0],
        ['dest.test', 0, 0, 1, 0],
      ]);
      // A later reading adds only what is new, and a minute later the old events have left the window.
      const now = d.env.clock.now();
      expect((await reader.snapshot({}, now + 1000)).last_minute).toEqual(s.last_minute);
      const later = await reader.snapshot({}, now + 61_000);
      expect(later.last_minute).toEqual({});
      expect(later.destinations.map((x) => x.domain)).toEqual(['slow.test']);
    } finally {
      close();
    }
  });

  it("shows an email's events and why it waits", async () => {
    const { reader, close } = topReader();
    try {
      const detail = (await reader.detail(waiting))!;
      expect(detail.status).toBe('SENDING');
      expect(detail.waiting).toHaveLength(1);
      expect(detail.waiting[0]).toMatch(/^later@slow\.test: QUEUED; attempts 1; next attempt \S+; last: .*451/);
      expect(detail.events.map((e) => e.type).slice(0, 2)).toEqual(['queued', 'sending']);
      expect(await reader.detail('00000000-0000-4000-8000-000000000000')).toBeNull();
    } finally {
      close();
    }
  });

  it('shows the relay sessions of the running servers, from their rows in nodes', async () => {
    let sessions = 3;
    const logger = createLogger({ level: 'silent', format: 'json' });
    // The heartbeat's writes, to wait for: a row is seen at its COMMIT, and the write ends at the
    // WAL's sync a moment later (store/wal-sync.ts); a look while it is in flight is skipped.
    const saves: Promise<void>[] = [];
    const nodes = d.env.app.nodes;
    const repo: typeof nodes = {
      ...nodes,
      save: (r) => {
        const p = nodes.save(r);
        saves.push(p);
        return p;
      },
    };
    const beat = startHeartbeat({ repo, clock: d.env.clock, logger, relaySessions: () => sessions });
    const { reader, close } = topReader();
    try {
      // The heartbeat writes on its own; wait for the write (under load it can take longer than a tick).
      const reads = async (want: { nodes: number; sessions: number }) =>
        vi.waitFor(async () => expect((await reader.snapshot()).relay).toEqual(want), {
          timeout: 10_000,
          interval: 20,
        });
      await reads({ nodes: 1, sessions: 3 });
      await Promise.all(saves);
      // A change is written within a second (of the test clock).
      sessions = 5;
      d.env.clock.advance(1000);
      await reads({ nodes: 1, sessions: 5 });
      // A clean stop removes the row; a node not seen for 30 s is taken for gone.
      await beat.stop();
      expect((await reader.snapshot()).relay).toEqual({ nodes: 0, sessions: 0 });
    } finally {
      close();
    }
  });
});

describe('svc top --server: the same readings through GET /v1/top, for the key’s project', () => {
  it('reads with a READ_ONLY key, as JSON and text', async () => {
    const run = await runSvc(d.env.dir, ['top', '--json', '--server', url, '--api-key', readOnlyKey]);
    expect(run.code, run.stderr).toBe(0);
    const s = run.json();
    // What /v1/openapi.json says of GET /v1/top, field for field.
    expect(snapshotSchema.parse(s)).toEqual(s);
    expect(s.project_id).toBe(d.env.init.project_id);
    expect(s.queue.recipients).toBe(1);
    expect(s.latest.map((e: { id: string }) => e.id).slice(0, 2)).toEqual([waiting, delivered]);
    const text = await runSvc(d.env.dir, ['top', '--server', url, '--filter', 'delivered'], {
      SVC_API_KEY: readOnlyKey,
    });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`UTC · project ${d.env.init.project_id}\n`);
    expect(text.stdout).toContain('latest emails (delivered):');
    expect(text.stdout).not.toContain('Waits');
  });

  it('answers the contract’s errors: no key 401, a key that may not read 403, a bad filter 422, another project’s email 404', async () => {
    const get = (path: string, key?: string) =>
      d.env.server.inject({ url: path, headers: key ? { authorization: `Bearer ${key}` } : {} });
    expect((await get('/v1/top')).statusCode).toBe(401);
    const sendOnly = await d.env.key({ env: 'LIVE', permissions: 'SENDING_ONLY' });
    const forbidden = await get('/v1/top', sendOnly);
    expect(forbidden.statusCode).toBe(403);
    const bad = await get('/v1/top?status=LOST', readOnlyKey);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('request_validation_failed');
    expect((await get('/v1/top?colour=red', readOnlyKey)).statusCode).toBe(422);
    const detail = await get(`/v1/top/emails/${waiting}`, readOnlyKey);
    expect(detail.statusCode).toBe(200);
    expect(detail.json().data.waiting[0]).toMatch(/next attempt/);
    expect(emailDetailSchema.parse(detail.json().data)).toEqual(detail.json().data);
    const doc = (await get('/v1/openapi.json')).json();
    expect(doc.paths['/v1/top'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'status',
      'to_email',
      'tag',
    ]);
    expect(doc.paths['/v1/top/emails/{email_id}'].get.operationId).toBe('getTopEmail');
    const other = await d.env.app.accounts.createProject(d.env.init.organization_id, { name: 'Other' });
    const otherKey = (await d.env.app.keys.createKey(other.id, { name: 'r', env: 'LIVE', permissions: 'READ_ONLY' }))
      .key!;
    expect((await get(`/v1/top/emails/${waiting}`, otherKey)).statusCode).toBe(404);
    const otherView = (await get('/v1/top', otherKey)).json().data;
    expect(otherView).toMatchObject({ latest: [], queue: { recipients: 0 }, destinations: [] });

    const run = await runSvc(d.env.dir, ['top', '--server', url, '--api-key', sendOnly]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: forbidden: /);
  });
});

describe('the live view, in parts', () => {
  it('draws sparklines scaled to the largest value, flat when all are zero', () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe('▁▁▂▄█');
    expect(sparkline([0, 0, 0])).toBe('▁▁▁');
  });

  it('shares the rows of the terminal between destinations and emails', () => {
    expect(layout(24, 10)).toEqual({ destinations: 3, latest: 6 });
    expect(layout(24, 1)).toEqual({ destinations: 1, latest: 8 });
    expect(layout(50, 10)).toEqual({ destinations: 10, latest: 25 });
  });
});

const SCRIPT = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

describe.skipIf(!SCRIPT)('svc top in a terminal (a pseudo-terminal from util-linux script)', () => {
  /** svc top in a PTY `cols`×`rows`: its screen so far, keys to type, and its exit code. */
  function inTerminal(args: string[] = [], size = { cols: 80, rows: 24 }, extraEnv: Record<string, string> = {}) {
    const command = `stty cols ${size.cols} rows ${size.rows}; exec ${process.execPath} ${SVC_ENTRY} top ${args.join(' ')}`;
    const child = spawn(SCRIPT!, ['-qfec', command, '/dev/null'], {
      env: { ...process.env, ...d.env.cliEnv, TERM: 'xterm-256color', ...extraEnv },
    });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const until = async (what: RegExp, from = 0) => {
      for (let i = 0; i < 200 && !what.test(screen.slice(from)); i++) await new Promise((r) => setTimeout(r, 50));
      expect(screen.slice(from)).toMatch(what);
    };
    /** The last whole frame (it ends with the footer), without escape sequences. */
    const frame = () => {
      const frames = screen.replace(ANSI, '').split('svc top — ');
      return `svc top — ${frames.findLast((f) => /q quit/.test(f)) ?? ''}`;
    };
    return { screen: () => screen, frame, type: (keys: string) => child.stdin.write(keys), until, exited };
  }

  it('shows the panels in 80×24, selects with the arrows, opens an email with Enter, filters with /, and q restores the terminal', async () => {
    const t = inTerminal();
    await t.until(/latest emails/);
    await t.until(/Waits/);
    await t.until(/svc top — [^]*svc top — [^]*svc top — /);
    const frame = t.frame().trimEnd().split(/\r?\n/);
    expect(frame.length, frame.join('\n')).toBeLessThanOrEqual(24);
    for (const line of frame) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(t.frame()).toMatch(/accepted {2}[▁▂▃▄▅▆▇█]{60} \d+\/s/);
    expect(t.frame()).toMatch(/slow\.test\s+1\s+1\s+0\s+0/);
    expect(t.frame()).toMatch(/no server running/);

    // The newest email is selected: Enter shows why it waits.
    t.type('\r');
    await t.until(/later@slow\.test: QUEUED; attempts 1; next attempt/);
    // One down is the delivered one, and its events.
    let mark = t.screen().length;
    t.type('\x1b');
    await t.until(/latest emails/, mark);
    t.type('\x1b[B');
    await t.until(/> \d\d:\d\d:\d\d DELIVERED/);
    t.type('\r');
    mark = t.screen().length;
    await t.until(/delivered\s+ok@dest\.test 250/, mark);
    mark = t.screen().length;
    t.type('\x1b');
    await t.until(/latest emails/, mark);

    // `/` filters: only the waiting one is SENDING.
    t.type('/');
    await t.until(/filter: █/);
    t.type('sending');
    await t.until(/filter: sending█/);
    t.type('\r');
    mark = t.screen().length;
    await t.until(/latest emails \(sending\)/, mark);
    await t.until(/svc top — [^]*svc top — /, mark);
    expect(t.frame()).toContain('Waits');
    expect(t.frame()).not.toMatch(/DELIVERED/);
    // A filter the list refuses says why, in one line.
    t.type(`/tag:${'x'.repeat(300)}\r`);
    await t.until(/filter tag: /);
    t.type('\x1b');
    t.type('q');
    expect(await t.exited).toBe(0);
    // The cursor is shown again.
    expect(t.screen().slice(-40)).toContain('\x1b[?25h');
  });

  it('uses a larger terminal, and leaves on Ctrl-C with exit 0', async () => {
    const t = inTerminal([], { cols: 140, rows: 50 });
    await t.until(/latest emails/);
    await t.until(/svc top — [^]*svc top — /);
    expect(
      t
        .frame()
        .split(/\r?\n/)
        .some((l) => l.length > 80),
    ).toBe(true);
    t.type('\x03');
    expect(await t.exited).toBe(0);
  });

  it('reads a running server with --server and a READ_ONLY key, and follows what it takes meanwhile', async () => {
    const t = inTerminal(['--server', url], { cols: 100, rows: 30 }, { SVC_API_KEY: readOnlyKey });
    await t.until(new RegExp(`project ${d.env.init.project_id}`));
    await t.until(/Waits/);
    // Emails sent while it runs show up, newest first, as the API lists them.
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push(await d.send([`new${i}@dest.test`], { subject: `Live ${i}` }));
    const mark = t.screen().length;
    await t.until(/Live 4[^]*Live 3[^]*Live 2[^]*Live 1[^]*Live 0/, mark);
    const listed = await d.env.server.inject({
      url: '/v1/emails?limit=5',
      headers: { authorization: `Bearer ${readOnlyKey}` },
    });
    expect(listed.json().data.map((e: { id: string }) => e.id)).toEqual(sent.reverse());
    await settle(d.env);
    t.type('q');
    expect(await t.exited).toBe(0);
  });
});
