import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, startDestinations, type DeliveryEnv } from './delivery-helpers.ts';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { runSvc, SVC_ENTRY } from './cli-runner.ts';
import { openReadOnly } from '../src/store/db.ts';
import { createTopReader } from '../src/top/repo.ts';
import { sparkline } from '../src/tui/top.ts';

// svc top outside a terminal (issue 16, item 1 in part): one snapshot of the data dir,
// read-only, beside a server that has the database open.

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;

beforeAll(async () => {
  ({ dns, mx } = await startDestinations(['dest.test', 'slow.test']));
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
});

afterAll(async () => {
  await d.env.close();
  await mx.close();
  await dns.close();
});

describe('svc top, outside a terminal', () => {
  it('prints the queue, the throughput, the waiting destinations and the latest emails, as JSON and text', async () => {
    mx.behaviour.set('later@slow.test', { rcpt: [451, '4.7.1 Greylisted, please try again later'] });
    const delivered = await d.send(['ok@dest.test']);
    const waiting = await d.send(['later@slow.test'], { subject: 'Waits' });
    await settle(d.env);

    const run = await runSvc(d.env.dir, ['top', '--json'], { SVC_DATA_DIR: d.env.dir });
    expect(run.code, run.stderr).toBe(0);
    const s = run.json();
    expect(s.queue).toEqual({ recipients: 1, oldest_seconds: expect.any(Number) });
    expect(s.waiting_by_destination).toEqual([
      { domain: 'slow.test', recipients: 1, throttled: false, concurrency: null },
    ]);
    expect(s.latest.map((e: { id: string }) => e.id).slice(0, 2)).toEqual([waiting, delivered]);
    expect(s.latest[0]).toMatchObject({ status: 'SENDING', to: ['later@slow.test'], subject: 'Waits' });
    // The CLI reads the real clock; the counts of an hour are checked below on the test's clock.
    expect(s).toHaveProperty('this_hour');
    expect(s).toHaveProperty('last_minute');
    expect(s.webhooks).toEqual({ pending_events: 0, auto_disabled: [] });
    expect(run.stderr).toBe('');

    const text = await runSvc(d.env.dir, ['top'], { SVC_DATA_DIR: d.env.dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^svc top — /);
    expect(text.stdout).toMatch(/queue: 1 recipients waiting, oldest \d+ s/);
    expect(text.stdout).toContain('slow.test: 1');
    for (const line of text.stdout.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('counts the events of the last minute and of this hour', () => {
    const db = openReadOnly(d.env.dir);
    try {
      const reader = createTopReader(db);
      const s = reader.snapshot(d.env.clock.now());
      expect(s.this_hour).toMatchObject({ queued: 2, delivered: 1 });
      expect(s.last_minute).toMatchObject({ queued: 2, delivered: 1, sending: 2 });
      expect(s.previous_hour).toEqual({});
      // Per second over the minute, for the sparklines.
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      expect(s.per_second.accepted).toHaveLength(60);
      expect(sum(s.per_second.accepted)).toBe(2);
      expect(sum(s.per_second.delivered)).toBe(1);
      expect(sum(s.per_second.bounced)).toBe(0);
      // A later reading adds only what is new, and a minute later the old events have left the window.
      expect(reader.snapshot(d.env.clock.now() + 1000).last_minute).toEqual(s.last_minute);
      expect(reader.snapshot(d.env.clock.now() + 61_000).last_minute).toEqual({});
    } finally {
      db.close();
    }
  });

  it('exits 1 with one clear line on a data dir that does not exist', async () => {
    const run = await runSvc(d.env.dir, ['top'], { SVC_DATA_DIR: `${d.env.dir}/nope` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no svc data dir at/);
  });
});

const SCRIPT = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));

describe('sparkline', () => {
  it('scales to the largest value, and is flat when all are zero', () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe('▁▁▂▄█');
    expect(sparkline([0, 0, 0])).toBe('▁▁▁');
  });
});

describe.skipIf(!SCRIPT)('svc top in a terminal (a pseudo-terminal from util-linux script)', () => {
  /** svc top in a PTY: its screen so far, keys to type, and its exit code. */
  function inTerminal() {
    const child = spawn(SCRIPT!, ['-qfec', `${process.execPath} ${SVC_ENTRY} top`, '/dev/null'], {
      env: { ...process.env, SVC_DATA_DIR: d.env.dir, COLUMNS: '100', LINES: '40', TERM: 'xterm-256color' },
    });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const until = async (what: RegExp) => {
      for (let i = 0; i < 200 && !what.test(screen); i++) await new Promise((r) => setTimeout(r, 50));
      expect(screen).toMatch(what);
    };
    return { screen: () => screen, type: (keys: string) => child.stdin.write(keys), until, exited };
  }

  it('shows the panels, selects an email with the arrows, opens its events with Enter, and q restores the terminal', async () => {
    const t = inTerminal();
    await t.until(/latest emails/);
    await t.until(/Waits/);
    expect(t.screen()).toMatch(/waiting by destination/);
    expect(t.screen()).toMatch(/accepted {2}[▁▂▃▄▅▆▇█]{60} \d+\/s/);
    expect(t.screen()).toMatch(/slow\.test\s+1/);
    // The newest email is selected; one down is the delivered one.
    t.type('\x1b[B');
    await t.until(/> \d\d:\d\d:\d\d DELIVERED/);
    t.type('\r');
    await t.until(/events of [0-9a-f-]{36}/);
    await t.until(/delivered\s+ok@dest\.test 250/);
    // Esc closes the events: the next frame has none.
    const before = t.screen().length;
    t.type('\x1b');
    for (let i = 0; i < 40 && !/svc top —/.test(t.screen().slice(before)); i++)
      await new Promise((r) => setTimeout(r, 50));
    const frames = t.screen().slice(before).split('svc top —');
    expect(frames.at(-1)).not.toContain('events of');
    t.type('q');
    expect(await t.exited).toBe(0);
    // The cursor is shown again.
    expect(t.screen().slice(-40)).toContain('\x1b[?25h');
  });

  it('leaves on Ctrl-C too, with exit 0', async () => {
    const t = inTerminal();
    await t.until(/latest emails/);
    t.type('\x03');
    expect(await t.exited).toBe(0);
  });
});
