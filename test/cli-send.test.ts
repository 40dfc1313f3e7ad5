import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../src/cli/api-client.ts';
import { runSvc, spawnSvc, startServe } from './cli-runner.ts';

// `svc send` against a scripted Public API on loopback: what it retries, how long
// it waits, and what it sends at all.

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang up';

/** An HTTP server answering each request with the next scripted reply (the last one repeats). */
async function scripted(replies: Reply[]): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const reply = replies[Math.min(seen.length - 1, replies.length - 1)]!;
      if (reply === 'hang up') return void req.socket.destroy();
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const accepted = { status: 202, body: { data: { id: 'e1', status: 'QUEUED', skipped_recipients: [] } } };
const failure = (status: number, code: string, message: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers,
  body: { error: { code, message, details: null, request_id: 'r' } },
});
const limited = (retryAfter: string) =>
  failure(429, 'rps_exceeded', 'More than 1 request per second', { 'retry-after': retryAfter });

/**
 * POST /v1/emails as the contract has it: a new Idempotency-Key creates an email (202),
 * a known one replays the first answer (200, `Idempotent-Replayed: true`). Past the
 * first `answerFirst` requests it takes each in (the email is created) without
 * answering, as a server whose client was interrupted would, until answerAll().
 */
async function idempotentApi({ answerFirst = Infinity } = {}) {
  const seen: Seen[] = [];
  const byKey = new Map<string, { body: string; data: unknown }>();
  let answering = answerFirst;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const key = String(req.headers['idempotency-key']);
      const prior = byKey.get(key);
      const data = prior?.data ?? { id: `e${byKey.size + 1}`, status: 'SIMULATED', skipped_recipients: [] };
      if (!prior) byKey.set(key, { body, data });
      if (answering-- <= 0) return;
      res.writeHead(prior ? 200 : 202, { 'content-type': 'application/json', ...(prior && IDEMPOTENT_REPLAY) });
      res.end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    created: () => byKey.size,
    createdBodies: () => [...byKey.values()].map((v) => v.body),
    answerAll: () => void (answering = Infinity),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
const IDEMPOTENT_REPLAY = { 'idempotent-replayed': 'true' };

/** Waits (briefly, polling) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 200) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let peer: Awaited<ReturnType<typeof scripted>> | undefined;
let api: Awaited<ReturnType<typeof idempotentApi>> | undefined;
afterEach(async () => {
  await peer?.close();
  await api?.close();
  peer = undefined;
  api = undefined;
});
const apiArgs = () => ['--api-key', 'svc_test_x', '--server', api!.url];

/** A client of `peer` whose waits are recorded instead of slept, and whose lines are kept. */
function clientOf(url: string, retries?: number) {
  const waits: number[] = [];
  const said: string[] = [];
  const client = createApiClient(
    { server: url, apiKey: 'svc_test_x', retries },
    { sleep: (ms) => Promise.resolve(void waits.push(ms)), say: (l) => void said.push(l) },
  );
  return { client, waits, said };
}

describe('the API client of svc send', () => {
  it('waits Retry-After on 429 and tries again, saying so', async () => {
    peer = await scripted([limited('2'), accepted]);
    const { client, waits, said } = clientOf(peer.url);
    const res = await client.call('POST', '/v1/emails', {}, { 'idempotency-key': 'k1' });
    expect(res.status).toBe(202);
    expect(peer.seen).toHaveLength(2);
    expect(waits).toEqual([2000]);
    expect(said).toEqual(['429 rps_exceeded: More than 1 request per second: retrying in 2 s (retry 1 of 3)']);
  });

  it('stops after --retries and reports the last error', async () => {
    peer = await scripted([limited('1')]);
    const { client, waits } = clientOf(peer.url, 2);
    await expect(client.call('GET', '/v1/emails')).rejects.toMatchObject({ code: 'rps_exceeded' });
    expect(peer.seen).toHaveLength(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it('backs off exponentially on 5xx', async () => {
    peer = await scripted([
      failure(503, 'service_unavailable', 'busy'),
      failure(500, 'internal_error', 'oops'),
      failure(502, 'internal_error', 'bad gateway'),
      accepted,
    ]);
    const { client, waits } = clientOf(peer.url);
    expect((await client.call('POST', '/v1/emails/batch', { emails: [] })).status).toBe(202);
    expect(waits).toEqual([1000, 2000, 4000]);
  });

  it('does not retry other client errors, nor a 429 whose wait is longer than a minute', async () => {
    peer = await scripted([failure(422, 'request_validation_failed', 'bad'), accepted]);
    await expect(clientOf(peer.url).client.call('POST', '/v1/emails', {})).rejects.toMatchObject({
      code: 'request_validation_failed',
    });
    expect(peer.seen).toHaveLength(1);
    await peer.close();
    peer = await scripted([failure(429, 'monthly_volume_exceeded', 'Monthly volume used', { 'retry-after': '86400' })]);
    const { client, waits } = clientOf(peer.url);
    await expect(client.call('POST', '/v1/emails', {})).rejects.toThrow('Monthly volume used (retry after 86400 s)');
    expect([peer.seen.length, waits.length]).toEqual([1, 0]);
  });

  it('repeats an unanswered request only when that cannot send twice', async () => {
    peer = await scripted(['hang up', accepted]);
    // A batch has no Idempotency-Key: the server may have accepted it before the line dropped.
    await expect(clientOf(peer.url).client.call('POST', '/v1/emails/batch', {})).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(peer.seen).toHaveLength(1);
    await peer.close();
    // A single send with its key can be repeated: a replay answers, nothing is sent twice.
    peer = await scripted(['hang up', accepted]);
    const { client, waits } = clientOf(peer.url);
    expect((await client.call('POST', '/v1/emails', {}, { 'idempotency-key': 'k2' })).status).toBe(202);
    expect(waits).toEqual([1000]);
    expect(peer.seen.map((r) => r.headers['idempotency-key'])).toEqual(['k2', 'k2']);
  });

  it('paced (svc send --batch), waits through the key rate quietly, not counting it as a retry', async () => {
    peer = await scripted([limited('1'), limited('2'), limited('1'), limited('1'), accepted]);
    const waits: number[] = [];
    const said: string[] = [];
    const client = createApiClient(
      { server: peer.url, apiKey: 'svc_test_x', retries: 0, paced: true },
      { sleep: (ms) => Promise.resolve(void waits.push(ms)), say: (l) => void said.push(l) },
    );
    expect((await client.call('POST', '/v1/emails', {}, { 'idempotency-key': 'k' })).status).toBe(202);
    expect([waits, said]).toEqual([[1000, 2000, 1000, 1000], []]);
  });

  it('tries again while the first request with the same key is still being handled', async () => {
    peer = await scripted([failure(409, 'idempotency_in_progress', 'still processing'), accepted]);
    const { client, waits } = clientOf(peer.url);
    expect((await client.call('POST', '/v1/emails', {}, { 'idempotency-key': 'k' })).status).toBe(202);
    expect(waits).toEqual([1000]);
  });

  it('retries a refused connection, which never carried the request', async () => {
    peer = await scripted([accepted]);
    const url = peer.url;
    await peer.close();
    peer = undefined;
    const { client, waits, said } = clientOf(url, 1);
    await expect(client.call('POST', '/v1/emails/batch', {})).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(waits).toEqual([1000]);
    expect(said[0]).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+: .*retrying in 1 s \(retry 1 of 1\)$/);
  });
});

describe('svc send', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-send-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const send = (args: string[]) => runSvc(dir, ['send', '--api-key', 'svc_test_x', '--server', peer!.url, ...args]);
  const simple = ['--from', 'a@example.com', '--to', 'b@example.com', '--subject', 'Hi', '--text', 'Hello'];

  it('gives every single send an Idempotency-Key, and --retries 0 tries once', async () => {
    peer = await scripted([failure(503, 'service_unavailable', 'busy')]);
    const r = await send([...simple, '--retries', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: service_unavailable: busy\n');
    expect(peer.seen).toHaveLength(1);
    expect(peer.seen[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    const given = await send([...simple, '--retries', '0', '--idempotency-key', 'mine']);
    expect(given.code).toBe(1);
    expect(peer.seen[1]!.headers['idempotency-key']).toBe('mine');
  });

  it('sends --metadata k=v, --scheduled-at and --template-version as the request fields (issue 35)', async () => {
    peer = await scripted([accepted]);
    const r = await send([
      ...simple,
      '--metadata',
      'order_id=42',
      '--metadata',
      'tier=gold=plus',
      '--scheduled-at',
      'in 1 hour',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(peer.seen[0]!.body)).toMatchObject({
      metadata: { order_id: '42', tier: 'gold=plus' },
      scheduled_at: 'in 1 hour',
    });
    const versioned = await send([
      '--from',
      'a@example.com',
      '--to',
      'b@example.com',
      '--template',
      'w',
      '--template-version',
      '3',
    ]);
    expect(versioned.code, versioned.stderr).toBe(0);
    expect(JSON.parse(peer.seen[1]!.body)).toMatchObject({ template: 'w', template_version: 3 });
    const bad = await send([...simple, '--metadata', 'nokey']);
    expect([bad.code, bad.stderr]).toEqual([2, "error: --metadata wants k=v, got nokey\nrun 'svc send --help'\n"]);
  });

  it('refuses a --retries that is not a count (exit 2)', async () => {
    peer = await scripted([accepted]);
    const r = await send([...simple, '--retries', 'many']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--retries wants a whole number');
    expect(peer.seen).toHaveLength(0);
  });

  const good = (to: string) => JSON.stringify({ from: 'a@example.com', to: [to], subject: 'Hi', text: 'x' });
  const lines = [
    good('one@example.com'),
    '{not json',
    good('two@example.com'),
    JSON.stringify({ from: 'a@example.com', to: ['not-an-address'], subject: 'Hi', text: 'x' }),
    JSON.stringify({ from: 'a@example.com', subject: 'no recipients' }),
    '',
    good('three@example.com'),
  ];
  const batchResults = (n: number) => ({
    status: 200,
    body: {
      data: {
        results: Array.from({ length: n }, (_, index) => ({ index, id: `e${index}`, status: 'QUEUED', error: null })),
      },
    },
  });

  it('--batch validates every line first and, finding bad ones, reports each by line number and sends nothing', async () => {
    peer = await scripted([batchResults(3)]);
    writeFileSync(join(dir, 'b.jsonl'), lines.join('\n') + '\n');
    const r = await send(['--batch', join(dir, 'b.jsonl')]);
    expect(r.code).toBe(1);
    expect(peer.seen).toHaveLength(0);
    const out = r.stdout.trim().split('\n');
    expect(out[0]).toMatch(/^line 2: request_validation_failed: not JSON: /);
    expect(out[1]).toMatch(/^line 4: request_validation_failed: to\.0: /);
    expect(out[2]).toMatch(/^line 5: request_validation_failed: to: /);
    expect(out[3]).toBe('3 invalid lines of 6: nothing was sent (--skip-invalid sends the 3 valid)');
    const json = await send(['--batch', join(dir, 'b.jsonl'), '--json']);
    expect(json.code).toBe(1);
    expect(json.json()).toMatchObject({ accepted_count: 0, failed_count: 3 });
    expect(json.json().results.map((x: { line: number }) => x.line)).toEqual([2, 4, 5]);
    expect(peer.seen).toHaveLength(0);
  });

  it('--skip-invalid sends the valid lines, one POST /v1/emails each with its key, and still exits 1', async () => {
    api = await idempotentApi();
    writeFileSync(join(dir, 'b.jsonl'), lines.join('\n') + '\n');
    const r = await runSvc(dir, ['send', ...apiArgs(), '--batch', join(dir, 'b.jsonl'), '--skip-invalid', '--json']);
    expect(r.code).toBe(1);
    expect(api.seen.map((x) => x.url)).toEqual(['/v1/emails', '/v1/emails', '/v1/emails']);
    expect(api.seen.map((x) => (JSON.parse(x.body) as { to: string[] }).to[0]).sort()).toEqual([
      'one@example.com',
      'three@example.com',
      'two@example.com',
    ]);
    for (const x of api.seen) expect(x.headers['idempotency-key']).toMatch(/^svc-batch-[0-9a-f]{64}$/);
    const summary = r.json();
    expect(summary).toMatchObject({ accepted_count: 3, already_sent_count: 0, failed_count: 3 });
    expect(summary.results.map((x: { line: number; id: string | null }) => [x.line, x.id !== null])).toEqual([
      [1, true],
      [2, false],
      [3, true],
      [4, false],
      [5, false],
      [7, true],
    ]);
  });

  it('--batch of valid lines only sends them all and exits 0', async () => {
    api = await idempotentApi();
    writeFileSync(join(dir, 'ok.jsonl'), [good('x@example.com'), good('y@example.com')].join('\n'));
    const r = await runSvc(dir, ['send', ...apiArgs(), '--batch', join(dir, 'ok.jsonl')]);
    expect([r.code, r.stdout]).toEqual([0, 'accepted 2, already sent: 0, failed 0\n']);
  });

  it('run again, the same file sends nothing twice and says what was already sent', async () => {
    api = await idempotentApi();
    // Two identical lines are two emails; a line may carry its own key.
    const mine = { from: 'a@example.com', to: ['o@example.com'], subject: 'Hi', text: 'x' };
    const own = JSON.stringify({ idempotency_key: 'order-17', ...mine });
    const file = [good('x@example.com'), good('y@example.com'), good('x@example.com'), own];
    writeFileSync(join(dir, 'again.jsonl'), file.join('\n'));
    const run = (...more: string[]) =>
      runSvc(dir, ['send', ...apiArgs(), '--batch', join(dir, 'again.jsonl'), ...more]);
    expect((await run()).stdout).toBe('accepted 4, already sent: 0, failed 0\n');
    expect(api.created()).toBe(4);
    const own17 = api.seen.find((x) => x.headers['idempotency-key'] === 'order-17')!;
    expect(JSON.parse(own17.body)).toEqual(mine);
    const second = await run();
    expect([second.code, second.stdout]).toEqual([0, 'accepted 0, already sent: 4, failed 0\n']);
    expect(api.created()).toBe(4);
    // Reformatted and with a line removed: no key moves, so nothing is sent again.
    const reordered = Object.fromEntries(Object.entries(JSON.parse(good('y@example.com')) as object).reverse());
    const reformatted = [JSON.stringify(reordered).replace(/,/g, ', '), file[2], own];
    writeFileSync(join(dir, 'again.jsonl'), reformatted.join('\n'));
    expect((await run()).stdout).toBe('accepted 0, already sent: 3, failed 0\n');
    // --batch-id names a new batch: the same lines are sent again, under other keys, but not a line's own key.
    expect((await run('--batch-id', 'monday')).stdout).toBe('accepted 2, already sent: 1, failed 0\n');
    expect(api.created()).toBe(6);
  });

  it('keys a line by its file: the same line in another file is sent, a moved file resumes with its --batch-id', async () => {
    api = await idempotentApi();
    const same = [good('x@example.com'), good('y@example.com')].join('\n');
    writeFileSync(join(dir, 'monday.jsonl'), same);
    writeFileSync(join(dir, 'tuesday.jsonl'), same);
    const run = (file: string, ...more: string[]) =>
      runSvc(dir, ['send', ...apiArgs(), '--batch', join(dir, file), ...more]);
    expect((await run('monday.jsonl')).stdout).toBe('accepted 2, already sent: 0, failed 0\n');
    expect((await run('tuesday.jsonl')).stdout).toBe('accepted 2, already sent: 0, failed 0\n');
    expect(api.created()).toBe(4);
    // The path is the file's whole name, not what was typed: a relative path is the same file.
    expect((await runSvc(dir, ['send', ...apiArgs(), '--batch', 'monday.jsonl'])).stdout).toBe(
      'accepted 0, already sent: 2, failed 0\n',
    );
    // With --batch-id the name stands for the file wherever it is: renamed, it resumes.
    expect((await run('monday.jsonl', '--batch-id', 'newsletter')).stdout).toBe(
      'accepted 2, already sent: 0, failed 0\n',
    );
    writeFileSync(join(dir, 'renamed.jsonl'), same);
    expect((await run('renamed.jsonl', '--batch-id', 'newsletter')).stdout).toBe(
      'accepted 0, already sent: 2, failed 0\n',
    );
    expect(api.created()).toBe(6);
  });

  it('stops at an answer that is not about the line (a refused key), saying how to resume', async () => {
    peer = await scripted([failure(401, 'unauthorized', 'Missing or invalid credentials')]);
    writeFileSync(join(dir, 'ok.jsonl'), [good('x@example.com'), good('y@example.com')].join('\n'));
    const r = await send(['--batch', join(dir, 'ok.jsonl'), '--concurrency', '1']);
    expect(r.code).toBe(1);
    expect(peer.seen).toHaveLength(1);
    expect(r.stderr).toBe(
      'error: unauthorized: Missing or invalid credentials: stopped: 0 of 2 lines accepted; ' +
        'run the same command again within 24 hours to send the rest (no line is sent twice)\n',
    );
  });

  it('refuses a line with a misspelt field before sending anything, naming the line, field and the known name', async () => {
    api = await idempotentApi();
    const misspelt = JSON.stringify({
      from: 'a@example.com',
      to: ['b@example.com'],
      subject: 'Hi',
      text: 'x',
      tag: ['x'],
    });
    writeFileSync(join(dir, 'misspelt.jsonl'), [good('x@example.com'), misspelt].join('\n'));
    const r = await runSvc(dir, ['send', ...apiArgs(), '--batch', join(dir, 'misspelt.jsonl')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      'line 2: request_validation_failed: tag: unknown field "tag"; did you mean "tags"?\n' +
        '1 invalid line of 2: nothing was sent (--skip-invalid sends the 1 valid)\n',
    );
    expect(api.seen).toHaveLength(0);
  });

  it('Ctrl-C says how many were accepted and how to resume, exits 130, and the re-run sends each line once', async () => {
    // The server answers 5 requests, then takes the next ones in (as accepted) without answering yet.
    api = await idempotentApi({ answerFirst: 5 });
    const file = Array.from({ length: 12 }, (_, i) => good(`r${i}@example.com`));
    writeFileSync(join(dir, 'big.jsonl'), file.join('\n'));
    const args = ['send', ...apiArgs(), '--batch', join(dir, 'big.jsonl'), '--concurrency', '2'];
    const child = await spawnSvc(dir, args);
    await until(() => api!.seen.length === 7);
    child.child.kill('SIGINT');
    expect(await child.exited).toBe(130);
    expect(child.stderr()).toBe(
      'interrupted: 5 of 12 lines accepted; run the same command again within 24 hours to send the rest ' +
        '(no line is sent twice)\n',
    );
    api.answerAll();
    const again = await runSvc(dir, args);
    expect([again.code, again.stdout]).toEqual([0, 'accepted 5, already sent: 7, failed 0\n']);
    expect(api.created()).toBe(12);
    const recipients = api.createdBodies().map((b) => (JSON.parse(b) as { to: string[] }).to[0]);
    expect(recipients.sort()).toEqual(file.map((l) => (JSON.parse(l) as { to: string[] }).to[0]).sort());
  });
});

describe('svc send --batch against svc serve', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-send-serve-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends each line once however often the file is run, and a re-run says already sent', async () => {
    const served = await startServe(dir);
    try {
      const key = /TEST API key:\s+(\S+)/.exec(served.stdout())![1]!;
      const lines = Array.from({ length: 30 }, (_, i) =>
        JSON.stringify({ from: 'a@example.com', to: [`r${i}@example.org`], subject: `Hi ${i}`, text: 'x' }),
      );
      // The same email twice on purpose: two lines, two emails.
      writeFileSync(join(dir, 'b.jsonl'), [...lines, lines[0]].join('\n'));
      const send = () => runSvc(dir, ['send', '--api-key', key, '--server', served.url(), '--batch', 'b.jsonl']);
      expect((await send()).stdout).toBe('accepted 31, already sent: 0, failed 0\n');
      const again = await send();
      expect([again.code, again.stdout]).toEqual([0, 'accepted 0, already sent: 31, failed 0\n']);
      const listed = await runSvc(dir, ['emails', 'list', '--project', 'Default', '--limit', '100', '--json']);
      expect(listed.json()).toHaveLength(31);
    } finally {
      await served.stop();
    }
  }, 90_000);
});
