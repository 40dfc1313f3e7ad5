import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditWriter } from '../src/audit/repo.ts';
import { createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createCommitter } from '../src/store/committer.ts';
import { openDatabase } from '../src/store/db.ts';
import { createWebhooksRepo } from '../src/webhooks/repo.ts';
import { createPgWebhooksRepo, type PgWebhooksRepo } from '../src/webhooks/repo-pg.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// The webhook outbox on PostgreSQL (issue 17, item 2): the body every node sends is the SQLite
// store's, byte for byte (the signature covers it); two nodes claim each event once; a node
// whose lease ran out writes nothing over the node that took the event after it.

const SEED = `INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
  INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x');
  INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
    VALUES ('w1', 'p1', 'https://hooks.example.com/', '["*"]', 'whsec_x', 'x', 'x');
  INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, tags, created_at)
    VALUES ('e1', 'p1', 'LIVE', 'QUEUED', 'news@example.com', '["ada@example.org","Bob <bob@example.net>"]',
            'Grüße – "quoted" \\ slash', '["welcome","β"]', '2026-11-26T12:00:00.000Z')`;
const EVENTS: [string, string, string, string | null, string | null][] = [
  ['ev1', 'queued', '{}', null, null],
  [
    'ev2',
    'delivered',
    '{"recipient":"ada@example.org","smtp_code":250,"mx_host":"mx.example.org","n":1.5}',
    null,
    null,
  ],
  ['ev3', 'clicked', '{"url":"https://example.com/a?b=1&c=é","ip":"old"}', '192.0.2.7', 'Mozilla/5.0 "x"'],
];
const NOW = '2026-11-26T13:00:00.000Z';

type Node = PgNode & { hooks: PgWebhooksRepo };
let a: Node;
let b: Node;
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await migratedPgDatabase('webhooks');
  drop = db.drop;
  const node = async (): Promise<Node> => {
    const n = await pgNode(db.url);
    return { ...n, hooks: createPgWebhooksRepo(n.pool, n.tx, createPgAuditWriter()) };
  };
  [a, b] = [await node(), await node()];
  await a.pool.query(SEED);
  for (const [id, type, data, ip, ua] of EVENTS) {
    await a.pool.query(
      `INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
       SELECT $1, seq, $2, $3, $4, $5, '2026-11-26T12:00:01.234Z' FROM emails WHERE id = 'e1'`,
      [id, type, data, ip, ua],
    );
  }
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

/** The bodies SQLite's store builds for the same rows. */
async function sqliteBodies(): Promise<Record<string, string | null>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hooks-'));
  const { db, close } = openDatabase(join(dir, 'data'), { create: true });
  try {
    db.exec(SEED);
    for (const [id, type, data, ip, ua] of EVENTS) {
      db.prepare(
        `INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
         SELECT ?, seq, ?, ?, ?, ?, '2026-11-26T12:00:01.234Z' FROM emails WHERE id = 'e1'`,
      ).run(id, type, data, ip, ua);
    }
    const tx = createCommitter(db, { windowMs: 1, maxBatch: 10 });
    const rows = await createWebhooksRepo(db, tx, createAuditWriter(db)).claimDue(NOW, 10, 60_000, new Set());
    tx.close();
    return Object.fromEntries(rows.map((r) => [r.event_id, r.payload]));
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the webhook outbox on PostgreSQL, with two nodes', () => {
  it('sends the bodies SQLite builds, byte for byte, and hands each event to one node', async () => {
    const [x, y] = await Promise.all([a.hooks.claimDue(NOW, 2, 60_000), b.hooks.claimDue(NOW, 2, 60_000)]);
    const claimed = [...x, ...y];
    expect(claimed.map((r) => r.event_id).sort()).toEqual(['ev1', 'ev2', 'ev3']);
    const lite = await sqliteBodies();
    for (const r of claimed) expect(r.payload, r.event_id).toBe(lite[r.event_id]);
    expect(JSON.parse(claimed.find((r) => r.event_id === 'ev3')!.payload!).data.event).toEqual({
      url: 'https://example.com/a?b=1&c=é',
      ip: '192.0.2.7',
      user_agent: 'Mozilla/5.0 "x"',
    });
    // Claimed: not due again until the lease runs out.
    expect(await a.hooks.claimDue(NOW, 10, 60_000)).toEqual([]);
    expect(await a.hooks.pendingCount()).toBe(3);
  });

  it('writes nothing for an attempt whose lease ran out and whose event another node took since', async () => {
    const later = '2026-11-26T13:01:00.001Z';
    const taken = await b.hooks.claimDue(later, 10, 60_000);
    expect(taken).toHaveLength(3);
    const stale = { ...taken[0]!, lease: '2026-11-26T13:01:00.000Z' };
    const attempt = (r: typeof stale) => ({
      record: {
        id: `d-${r.seq}-${r.lease}`,
        webhook_id: 'w1',
        event_id: r.event_id,
        event_type: r.event_type,
        attempt: r.attempts + 1,
        status: 'succeeded' as const,
        http_status: 200,
        duration_ms: 3,
        error: null,
        request_body: r.payload!,
        response_body: 'ok',
        created_at: later,
        next_attempt_at: null,
      },
      next: null,
      exhausted: false,
      disableAfter: 5,
    });
    expect(await a.hooks.recordAttempt(stale.seq, stale.lease, attempt(stale))).toBe(true);
    expect(await a.hooks.pendingCount()).toBe(3);
    expect((await a.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0]).toEqual({ n: 0 });
    for (const r of taken) expect(await b.hooks.recordAttempt(r.seq, r.lease, attempt(r))).toBe(true);
    expect(await b.hooks.pendingCount()).toBe(0);
    // Retention takes the records written before its cutoff, in batches.
    expect(await a.hooks.deleteDeliveriesBefore('2026-11-26T13:01:00.000Z', 0, 2)).toMatchObject({
      changed: 0,
      done: true,
    });
    expect((await a.hooks.listDeliveries('w1', { status: 'succeeded' }, 10, 0)).map((d) => d.event_id).sort()).toEqual([
      'ev1',
      'ev2',
      'ev3',
    ]);
  });

  it('drops attempt records older than the retention, in batches, and keeps the newer', async () => {
    const first = await b.hooks.deleteDeliveriesBefore('2026-11-26T13:01:00.002Z', 0, 2);
    expect(first).toMatchObject({ changed: 2, done: false });
    const second = await b.hooks.deleteDeliveriesBefore('2026-11-26T13:01:00.002Z', first.next, 2);
    expect(second).toMatchObject({ changed: 1, done: true });
    expect(await b.hooks.listDeliveries('w1', {}, 10, 0)).toEqual([]);
  });
});
