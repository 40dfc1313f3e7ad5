import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, startServe, type Served } from './cli-runner.ts';
import { publish } from './domains-helpers.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { migratedPgDatabase } from './postgres/db.ts';

// Issue 17: two `svc serve` nodes over one PostgreSQL, each taking sends over HTTP and both
// delivering to one MX peer. Every recipient gets one copy; a node killed while it delivers
// loses nothing (the other sends what it held once its lease has run out).

let dir: string;
let db: { url: string; drop: () => Promise<void> };
let dns: DnsServer;
let mx: MxPeer;
const nodes: Served[] = [];
/** Transactions at once to one destination (`--delivery-concurrency`), for both nodes together. */
const CONCURRENCY = 4;
/** Milliseconds the MX peer waits before it answers each message's final dot. */
let mxDelay = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-nodes-'));
  db = await migratedPgDatabase('nodes');
  dns = await startDnsServer();
  dns.set('mta.svc.test', { A: ['127.0.0.1'] });
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  mx = await startMxPeer({ dataDelayMs: () => mxDelay });
});

afterAll(async () => {
  for (const n of nodes) n.child.kill('SIGKILL');
  await mx?.close();
  await dns?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const svc = async (...args: string[]) => {
  const r = await runSvc(dir, [...args, '--database', db.url, '--json']);
  expect(r.code, `svc ${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(0);
  return r.json();
};

async function post(url: string, key: string, to: string[], idempotencyKey?: string, extra: object = {}) {
  const res = await fetch(`${url}/v1/emails`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: JSON.stringify({ from: 'news@sender.test', to, subject: 'Hello', text: 'Hi', ...extra }),
  });
  const body = (await res.json()) as { data?: { id: string }; error?: { code: string } };
  return { status: res.status, id: body.data?.id, code: body.error?.code };
}

async function send(url: string, key: string, to: string[]): Promise<string> {
  const r = await post(url, key, to);
  expect(r.status).toBe(202);
  return r.id!;
}

async function statusOf(url: string, key: string, id: string): Promise<string> {
  const res = await fetch(`${url}/v1/emails/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { data: { status: string } }).data.status;
}

/** Waits until every email is DELIVERED, asking `url`; returns the statuses it saw last. */
async function allDelivered(url: string, key: string, ids: string[], ms = 30_000): Promise<string[]> {
  const until = Date.now() + ms;
  let statuses: string[] = [];
  while (Date.now() < until) {
    statuses = await Promise.all(ids.map((id) => statusOf(url, key, id)));
    if (statuses.every((s) => s === 'DELIVERED')) break;
    await sleep(100);
  }
  return statuses;
}

/** Copies the MX peer got per recipient address. */
function copies(): Map<string, number> {
  const n = new Map<string, number>();
  for (const m of mx.received) for (const to of m.to) n.set(to, (n.get(to) ?? 0) + 1);
  return n;
}

describe('two svc serve nodes over one PostgreSQL', () => {
  let key: string;
  let urls: [string, string];

  it('share the sends and the deliveries: one copy per recipient, one email per Idempotency-Key', async () => {
    const init = await svc('init', '--email', 'o@example.com', '--password', 'pw-123456789', '--accept-dpa');
    const added = await svc(
      ...['domains', 'add', 'sender.test', '--org', init.organization_id, '--project', init.project_id],
      ...['--hostname', 'mta.svc.test'],
    );
    publish(dns, added);
    const verified = await svc(
      ...['domains', 'verify', 'sender.test', '--dns-servers', dns.server, '--hostname', 'mta.svc.test'],
    );
    expect(verified).toMatchObject({ status: 'VERIFIED' });
    key = (await svc('keys', 'create', '--project', init.project_id, '--name', 'live', '--env', 'LIVE')).key;

    // Each node names itself in EHLO, so the MX peer tells who sent what.
    for (const name of ['a', 'b']) {
      const own = mkdtempSync(join(dir, `${name}-`));
      nodes.push(
        await startServe(own, [
          ...['--database', db.url, '--dns-servers', dns.server, '--mx-port', String(mx.port)],
          ...['--hostname', `${name}.mta.svc.test`, '--workers', '1', '--delivery-lease', '3s'],
          ...['--delivery-concurrency', String(CONCURRENCY)],
        ]),
      );
    }
    urls = nodes.map((n) => n.url()) as [string, string];
    const [a, b] = urls;
    // Each node learns of the other from its heartbeat row, within a few seconds.
    const sharing = async (url: string) => /^svc_delivery_nodes 2$/m.test(await (await fetch(`${url}/metrics`)).text());
    const until = Date.now() + 15_000;
    while (!((await sharing(a)) && (await sharing(b))) && Date.now() < until) await sleep(100);
    expect([await sharing(a), await sharing(b)]).toEqual([true, true]);

    // One Idempotency-Key sent to both nodes at once: one email. The second is a replay (200),
    // or, while the first is still being accepted, 409 idempotency_in_progress.
    const both = await Promise.all([a, b].map((url) => post(url, key, ['once@dest.test'], 'order-1')));
    const first = both.find((r) => r.status === 202)!;
    expect(first).toBeDefined();
    const other = both.find((r) => r !== first)!;
    if (other.status === 200) expect(other.id).toBe(first.id);
    else expect(other).toMatchObject({ status: 409, code: 'idempotency_in_progress' });
    // And one node after the other: the replay names the same email.
    expect(await post(b, key, ['once@dest.test'], 'order-1')).toMatchObject({ status: 200, id: first.id });
    expect(await post(a, key, ['once@dest.test'], 'order-1')).toMatchObject({ status: 200, id: first.id });

    // 40 emails of 2 recipients, taken by both nodes in turn. Each message takes the MX peer
    // 50 ms, so the nodes' transactions overlap.
    mxDelay = 50;
    const ids = [first.id!];
    for (let i = 0; i < 40; i++) ids.push(await send(i % 2 ? b : a, key, [`r${i}-1@dest.test`, `r${i}-2@dest.test`]));
    expect(await allDelivered(b, key, ids)).toEqual(ids.map(() => 'DELIVERED'));
    const got = copies();
    expect(got.size).toBe(81);
    expect(
      [...got].filter(([, n]) => n !== 1),
      'recipients that did not get exactly one copy',
    ).toEqual([]);
    // Both nodes delivered, and together they kept to the destination's limit: each took its
    // share (2 of 4), not the whole limit.
    expect(new Set(mx.received.map((m) => m.helo))).toEqual(new Set(['a.mta.svc.test', 'b.mta.svc.test']));
    expect(mx.peakInData()).toBeLessThanOrEqual(CONCURRENCY);
  }, 60_000);

  it('send a schedule accepted by either once, not before its time, and not once cancelled by the other', async () => {
    const [a, b] = urls;
    // Each message takes a while at the MX, so neither node can send all 19 before the other's
    // claim pass comes (each holds at most its share of the destination's limit at once).
    mxDelay = 100;
    // Three seconds ahead: both nodes' claim passes (every 250 ms) see every email come due.
    const at = Date.now() + 3000;
    const scheduled_at = new Date(at).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await post(i % 2 ? b : a, key, [`s${i}@dest.test`], undefined, { scheduled_at });
      expect(r.status).toBe(202);
      ids.push(r.id!);
    }
    // Accepted by a, cancelled through b.
    const cancel = await fetch(`${b}/v1/emails/${ids[0]}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(cancel.status).toBe(200);
    expect(Date.now()).toBeLessThan(at);
    expect(await allDelivered(a, key, ids.slice(1))).toEqual(ids.slice(1).map(() => 'DELIVERED'));
    const mine = mx.received.filter((m) => m.to.some((t) => /^s\d+@/.test(t)));
    expect(mine.flatMap((m) => m.to).sort()).toEqual(
      Array.from({ length: 19 }, (_, i) => `s${i + 1}@dest.test`).sort(),
    );
    // The whole message reached the peer after its time (the clocks are this machine's one).
    expect(Math.min(...mine.map((m) => m.dataEndedAt))).toBeGreaterThanOrEqual(at);
    expect(new Set(mine.map((m) => m.helo))).toEqual(new Set(['a.mta.svc.test', 'b.mta.svc.test']));
    expect(await statusOf(a, key, ids[0]!)).toBe('CANCELED');
  }, 60_000);

  it('a node killed while it delivers loses nothing: the other sends what it held', async () => {
    const [a, b] = urls;
    // Slow answers keep transactions in flight; node a is killed while the MX peer is receiving
    // one of its messages, so it holds claimed recipients it never records.
    mxDelay = 1500;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await send(i % 2 ? b : a, key, [`k${i}-1@dest.test`, `k${i}-2@dest.test`]));
    const until = Date.now() + 20_000;
    while (!mx.inDataFrom().includes('a.mta.svc.test') && Date.now() < until) await sleep(10);
    expect(mx.inDataFrom()).toContain('a.mta.svc.test');
    nodes[0]!.child.kill('SIGKILL');
    mxDelay = 0;

    // Node b sends what a held once a's lease (3 s) has run out.
    expect(await allDelivered(b, key, ids, 45_000)).toEqual(ids.map(() => 'DELIVERED'));
    const got = copies();
    const mine = [...got].filter(([to]) => to.startsWith('k'));
    expect(mine).toHaveLength(60);
    // At least once; a second copy only for a transaction a had finished at the MX and not
    // yet recorded when it was killed (at most its 16 in flight).
    const twice = mine.filter(([, n]) => n > 1);
    expect(twice.length).toBeLessThanOrEqual(16);
    expect(mine.every(([, n]) => n <= 2)).toBe(true);
    // The kill came mid-delivery: b took over recipients that a had claimed (a second attempt).
    const retaken = await Promise.all(
      ids.map(async (id) => {
        const res = await fetch(`${b}/v1/emails/${id}/events`, { headers: { authorization: `Bearer ${key}` } });
        const events = ((await res.json()) as { data: { type: string; data: { attempt?: number } }[] }).data;
        return events.some((e) => e.type === 'sending' && e.data.attempt === 2);
      }),
    );
    expect(retaken.filter(Boolean).length).toBeGreaterThan(0);
  }, 90_000);
});
