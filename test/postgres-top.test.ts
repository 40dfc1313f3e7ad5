import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditWriter } from '../src/audit/repo.ts';
import { createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createPgSuppressionsRepo } from '../src/suppressions/repo-pg.ts';
import { createEmailsRepo, type AcceptOptions, type NewEmail } from '../src/emails/repo.ts';
import { newEmail } from './postgres/email-fixture.ts';
import { createPgEmailsRepo } from '../src/emails/repo-pg.ts';
import { createIdempotencySql } from '../src/idempotency/index.ts';
import { createPgIdempotency } from '../src/idempotency/repo-pg.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { createUsageSql } from '../src/limits/usage.ts';
import { createPgUsage } from '../src/limits/usage-pg.ts';
import { createCommitter, type Committer } from '../src/store/committer.ts';
import { openDatabase, type Db } from '../src/store/db.ts';
import { createSuppressionsRepo } from '../src/suppressions/repo.ts';
import { createTopReader } from '../src/top/repo.ts';
import { createPgTopReader } from '../src/top/repo-pg.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// svc top on both stores (issue 17): the same data, the same snapshot and detail, whole server
// and one project, with and without a filter.

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const NOW = T0 + 30_000;
const SEED = `INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
  INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x'), ('p2', 'o1', 'Q', 'x');
  INSERT INTO webhooks (id, project_id, url, events, secret, auto_disabled, is_active, created_at, updated_at)
    VALUES ('w1', 'p1', 'https://hooks.example.com/', '["delivered"]', 's', 0, 1, 'x', 'x'),
           ('w2', 'p2', 'https://off.example.com/', '["*"]', 's', 1, 0, 'x', 'x');
  INSERT INTO destination_throttles (domain, concurrency, paused_until, reason, updated_at)
    VALUES ('example.net', 2, '2026-11-26T12:05:00.000Z', '421 slow down', 'x');
  INSERT INTO nodes (id, hostname, pid, version, started_at, seen_at, relay_sessions)
    VALUES ('n1', 'mta', 1, '0.1.0', 'x', '2026-11-26T12:00:25.000Z', 4)`;
// Delivery's events and a failed webhook attempt, as the engine and the dispatcher write them.
const LATER = `INSERT INTO email_events (id, email_seq, type, data, created_at)
    SELECT 'd' || seq, seq, 'delivered', '{"recipient":"r' || seq || '@Example.NET"}', '2026-11-26T12:00:20.000Z'
    FROM emails WHERE status = 'QUEUED' AND seq % 4 = 1;
  UPDATE recipients SET attempts = 1 WHERE email_seq % 4 = 1;
  INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, request_body, created_at)
    VALUES ('wd1', 'w1', 'e', 'delivered', 1, 'failed', '{}', '2026-11-26T11:40:00.000Z')`;
const OPTS: AcceptOptions = { suppress: false, volume: null, idempotency: null };

function email(i: number): NewEmail {
  return newEmail(`0192f4c1-7c2e-7b3a-9d4e-${String(i).padStart(12, '0')}`, {
    project_id: i % 3 ? 'p1' : 'p2',
    env: i % 2 ? 'TEST' : 'LIVE',
    status: i % 2 ? 'SIMULATED' : 'QUEUED',
    to: [`r${i}@example.net`],
    subject: `n${i}`,
    tags: [`t${i % 2}`],
    created_at: new Date(T0 + i * 1000).toISOString(),
    event: { id: `ev-${i}`, type: i % 2 ? 'simulated' : 'queued', data: {} },
  });
}

let dir: string;
let db: Db;
let liteTx: Committer;
let liteClose: () => Promise<void>;
let node: PgNode;
let drop: () => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-top-'));
  const s = openDatabase(join(dir, 'data'), { create: true });
  db = s.db;
  liteClose = s.close;
  db.exec(SEED);
  liteTx = createCommitter(db, { windowMs: 1, maxBatch: 100 });
  const audit = createAuditWriter(db);
  const lite = createEmailsRepo(db, liteTx, {
    suppressions: createSuppressionsRepo(db, liteTx, audit),
    usage: createUsageSql(db),
    idempotency: createIdempotencySql(db),
    audit,
  });
  const pgDb = await migratedPgDatabase('top');
  drop = pgDb.drop;
  node = await pgNode(pgDb.url);
  await node.pool.query(SEED);
  const pg = createPgEmailsRepo(node.pool, node.tx, {
    usage: createPgUsage(node.pool),
    idempotency: createPgIdempotency(node.pool),
    audit: createPgAuditWriter(),
    suppressions: createPgSuppressionsRepo(node.pool, node.tx, createPgAuditWriter()),
  });
  for (let i = 0; i < 24; i++) {
    const e = email(i);
    await lite.acceptEmail({ ...e }, [{ address: e.to[0]!, kind: 'to' }], OPTS);
    await pg.acceptEmail({ ...e }, [{ address: e.to[0]!, kind: 'to' }], OPTS);
  }
  db.exec(LATER);
  await node.pool.query(LATER);
});
afterAll(async () => {
  liteTx?.close();
  await liteClose?.();
  rmSync(dir, { recursive: true, force: true });
  await node?.close();
  await drop?.();
});

describe('svc top on both stores', () => {
  it.each([
    ['the whole server', undefined, {}],
    ['one project', 'p1', {}],
    ['one project, filtered by status and tag', 'p1', { status: 'QUEUED' as const, tag: 't0' }],
    ['the other project, filtered by recipient', 'p2', { to_email: 'R0@example.net' }],
  ])('shows the same snapshot for %s', async (_name, projectId, filter) => {
    const clock = new FakeClock(new Date(NOW).toISOString());
    const opts = projectId ? { clock, projectId } : { clock };
    const [x, y] = [
      await createTopReader(db, opts).snapshot(filter, NOW),
      await createPgTopReader(node.pool, opts).snapshot(filter, NOW),
    ];
    expect(y).toEqual(x);
    expect(x.latest.length).toBeGreaterThan(0);
    if (!projectId) {
      expect(x.last_minute).toMatchObject({ delivered: 6, queued: 12, simulated: 12 });
      expect(x.destinations[0]).toMatchObject({ domain: 'example.net', throttled: true, delivered: 6 });
      expect(x.webhooks).toEqual({
        pending_events: 4,
        failed_last_hour: 1,
        auto_disabled: [{ id: 'w2', url: 'https://off.example.com/' }],
      });
      expect(x.relay).toEqual({ nodes: 1, sessions: 4 });
    }
  });

  it('shows the same detail of an email, and none of another project’s', async () => {
    const id = email(1).id;
    const [x, y] = [await createTopReader(db).detail(id), await createPgTopReader(node.pool).detail(id)];
    expect(y).toEqual(x);
    expect(x?.waiting.length).toBe(1);
    expect(await createPgTopReader(node.pool, { projectId: 'p2' }).detail(id)).toBeNull();
  });

  it('counts an event whose transaction commits after a later one was read, once', async () => {
    const clock = new FakeClock(new Date(NOW).toISOString());
    const reader = createPgTopReader(node.pool, { clock });
    const seq = (await node.pool.query<{ seq: number }>('SELECT min(seq) AS seq FROM emails')).rows[0]!.seq;
    const before = (await reader.snapshot({}, NOW)).last_minute.opened ?? 0;
    const add = (c: { query: typeof node.pool.query }, id: string) =>
      c.query(
        `INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES ($1, $2, 'opened', '{}', '2026-11-26T12:00:29.000Z')`,
        [id, seq],
      );
    // An open transaction takes a seq; a later one commits a higher seq; svc top reads.
    const slow = await node.pool.connect();
    try {
      await slow.query('BEGIN');
      await add(slow, 'late-1');
      await add(node.pool, 'early-1');
      expect((await reader.snapshot({}, NOW)).last_minute.opened).toBe(before + 1);
      // The lower seq commits now: the next reading counts it, and no reading counts it twice.
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
    expect((await reader.snapshot({}, NOW + 1000)).last_minute.opened).toBe(before + 2);
    expect((await reader.snapshot({}, NOW + 2000)).last_minute.opened).toBe(before + 2);
    // A seq taken by a transaction that rolls back never comes: it is not counted, and is looked
    // for only so long (its hole stays, and nothing else is lost meanwhile).
    const gone = await node.pool.connect();
    try {
      await gone.query('BEGIN');
      await add(gone, 'rolled-back');
      await add(node.pool, 'early-2');
      await gone.query('ROLLBACK');
    } finally {
      gone.release();
    }
    expect((await reader.snapshot({}, NOW + 3000)).last_minute.opened).toBe(before + 3);
    await node.pool.query('DELETE FROM email_events WHERE id IN ($1, $2, $3)', ['late-1', 'early-1', 'early-2']);
  });
});
