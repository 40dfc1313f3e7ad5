import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../src/cli/api-client.ts';
import { runSvc } from './cli-runner.ts';

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

let peer: Awaited<ReturnType<typeof scripted>> | undefined;
afterEach(async () => {
  await peer?.close();
  peer = undefined;
});

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

  it('--skip-invalid sends the valid lines and still exits 1', async () => {
    peer = await scripted([batchResults(3)]);
    writeFileSync(join(dir, 'b.jsonl'), lines.join('\n') + '\n');
    const r = await send(['--batch', join(dir, 'b.jsonl'), '--skip-invalid', '--json']);
    expect(r.code).toBe(1);
    expect(peer.seen).toHaveLength(1);
    const sent = JSON.parse(peer.seen[0]!.body) as { emails: { to: string[] }[] };
    expect(sent.emails.map((e) => e.to[0])).toEqual(['one@example.com', 'two@example.com', 'three@example.com']);
    const summary = r.json();
    expect(summary).toMatchObject({ accepted_count: 3, failed_count: 3 });
    expect(summary.results.map((x: { line: number; id: string | null }) => [x.line, x.id])).toEqual([
      [1, 'e0'],
      [2, null],
      [3, 'e1'],
      [4, null],
      [5, null],
      [7, 'e2'],
    ]);
  });

  it('--batch of valid lines only sends them all and exits 0', async () => {
    peer = await scripted([batchResults(2)]);
    writeFileSync(join(dir, 'ok.jsonl'), [good('x@example.com'), good('y@example.com')].join('\n'));
    const r = await send(['--batch', join(dir, 'ok.jsonl')]);
    expect([r.code, r.stdout]).toEqual([0, 'accepted 2, failed 0\n']);
  });
});
