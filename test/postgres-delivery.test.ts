import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventsInsert, stampsUpdate } from '../src/delivery/pg-event-writes.ts';
import { CLAIM_ROWS, createPgDeliveryRepo } from '../src/delivery/repo-pg.ts';
import type { DeliveryStore } from '../src/delivery/store.ts';
import type { LeasedRow } from '../src/delivery/repo.ts';
import type { RecipientOutcome } from '../src/delivery/repo.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// The delivery queue shared by several nodes over one PostgreSQL (issue 17, item 2): two nodes
// (each its own pool, group commit and repository) claim from one queue; no recipient is
// claimed twice, and a node whose lease ran out records nothing over the next claim.

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const LEASE_MS = 60_000;

type Node = PgNode & { repo: DeliveryStore };

let url: string;
let drop: () => Promise<void>;
let a: Node;
let b: Node;

async function node(): Promise<Node> {
  const n = await pgNode(url);
  const repo = createPgDeliveryRepo(n.pool, n.tx, {
    suppress: async (t, projectId, address, _emailId, at, reason) => {
      await t.query(
        `INSERT INTO suppressions (project_id, email, reason, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, email) DO UPDATE SET reason = excluded.reason`,
        [projectId, address, reason, at],
      );
    },
  });
  return { ...n, repo };
}

beforeAll(async () => {
  ({ url, drop } = await migratedPgDatabase('delivery'));
  [a, b] = [await node(), await node()];
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

/** `emails` emails of `each` due recipients each, LIVE and QUEUED. */
async function queue(emails: number, each: number): Promise<void> {
  await a.pool.query(
    `TRUNCATE organizations, users, emails, suppressions RESTART IDENTITY CASCADE;
     INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
     INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x')`,
  );
  const at = new Date(T0).toISOString();
  for (let e = 0; e < emails; e++) {
    const seq = (
      await a.pool.query<{ seq: number }>(
        `INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
         VALUES ($1, 'p1', 'LIVE', 'QUEUED', 'a@example.com', '[]', 's', $2) RETURNING seq`,
        [`e${e}`, at],
      )
    ).rows[0]!.seq;
    for (let r = 0; r < each; r++) {
      const address = `r${e}-${r}@example.net`;
      await a.pool.query(
        `INSERT INTO recipients (email_seq, project_id, address, address_lc, kind, status, next_attempt_at, updated_at,
                                 domain)
         VALUES ($1, 'p1', $2, $2, 'to', 'QUEUED', $3, $3, 'example.net')`,
        [seq, address, at],
      );
    }
  }
}

const delivered = (r: LeasedRow): RecipientOutcome => ({
  recipient_id: r.id,
  address: r.address,
  attempts: r.attempts + 1,
  decision: { kind: 'delivered', reply: { code: 250, enhanced: '2.0.0', text: 'ok' } },
  detail: '250 ok',
  delay_notified: 0,
  waited_ms: 0,
});

const CONN = { mx_host: 'mx.example.net', mx_ip: '127.0.0.1', tls: false } as never;

async function one<T>(sql: string, params: unknown[] = []): Promise<T> {
  return (await a.pool.query(sql, params)).rows[0] as T;
}

describe('the delivery queue on PostgreSQL, with two nodes', () => {
  beforeEach(() => queue(50, 4));

  it('hands every due recipient to exactly one of two nodes claiming at once', async () => {
    const claimed = new Map<number, string>();
    let claims = 0;
    const work = (n: Node, name: string) => async () => {
      for (;;) {
        const due = await n.repo.findDue(T0, 16);
        if (due.length === 0) return;
        const got = await n.repo.claim(due, T0, LEASE_MS, new Map());
        if (got.length > 0) claims++;
        for (const r of got) {
          expect(claimed.has(r.id), `recipient ${r.id} claimed twice`).toBe(false);
          claimed.set(r.id, name);
        }
      }
    };
    // What one node leased is not due for the other: b finds only rows a has not claimed.
    const first = await a.repo.claim(await a.repo.findDue(T0, 16), T0, LEASE_MS, new Map());
    expect(first).toHaveLength(16);
    claims++;
    for (const r of first) claimed.set(r.id, 'a');
    const seenByB = (await b.repo.findDue(T0, 200)).map((r) => r.id);
    expect(seenByB).toHaveLength(200 - 16);
    expect(seenByB.filter((id) => claimed.has(id))).toEqual([]);
    // The rest claimed at once by both nodes, two claimers each. Which node wins each race
    // depends on the machine's load, so only "exactly once" is asserted of it.
    await Promise.all([work(a, 'a')(), work(b, 'b')(), work(a, 'a')(), work(b, 'b')()]);
    expect(claimed.size).toBe(200);
    expect(await one('SELECT count(*)::int AS n, max(attempts) AS max FROM recipients')).toEqual({ n: 200, max: 1 });
    expect(await one("SELECT count(*)::int AS n FROM email_events WHERE type = 'sending'")).toEqual({ n: 200 });
    // Each claim named its rows with a token of its own.
    expect(await one("SELECT count(DISTINCT lease_token)::int AS n FROM recipients WHERE status = 'SENDING'")).toEqual({
      n: claims,
    });
  });

  it('claims nothing that another node delivered after this one found it due', async () => {
    // Both find the same recipient due; a claims, sends and records it before b's claim runs.
    const due = (await a.repo.findDue(T0, 1)).slice(0, 1);
    const seen = (await b.repo.findDue(T0, 10)).filter((r) => r.id === due[0]!.id);
    expect(seen).toHaveLength(1);
    const [mine] = await a.repo.claim(due, T0, LEASE_MS, new Map());
    expect(await a.repo.record(mine!.email_seq, 'p1', 'e0', CONN, [delivered(mine!)], T0 + 1, mine!.lease)).toBe(1);
    // Lease cleared by the record, the row is no longer due: b gets nothing (it sent it twice before).
    expect(await b.repo.claim(seen, T0 + 2, LEASE_MS, new Map())).toEqual([]);
    expect(await one('SELECT status, attempts FROM recipients WHERE id = $1', [mine!.id])).toEqual({
      status: 'DELIVERED',
      attempts: 1,
    });
  });

  it('moves an email to DELIVERED when two nodes record its last recipients at the same time', async () => {
    // Each email's four recipients: two claimed by a, two by b, all recorded at once. Each
    // record reads the email's other recipients; without a lock on the email, each read the
    // other's as SENDING and the email stayed SENDING with every recipient delivered.
    const rows = await a.repo.findDue(T0, 200);
    const claims = await Promise.all(
      Array.from({ length: 50 }, async (_v, e) => {
        const mine = rows.filter((r) => r.email_seq === e + 1);
        return [
          await a.repo.claim(mine.slice(0, 2), T0, LEASE_MS, new Map()),
          await b.repo.claim(mine.slice(2), T0, LEASE_MS, new Map()),
        ];
      }),
    );
    const record = (n: Node, got: LeasedRow[], e: number) =>
      n.repo.record(e + 1, 'p1', `e${e}`, CONN, got.map(delivered), T0 + 1, got[0]!.lease);
    await Promise.all(claims.flatMap(([x, y], e) => [record(a, x!, e), record(b, y!, e)]));
    expect(await one("SELECT count(*)::int AS n FROM recipients WHERE status = 'DELIVERED'")).toEqual({ n: 200 });
    expect(await one('SELECT array_agg(DISTINCT status) AS s FROM emails')).toEqual({ s: ['DELIVERED'] });
  });

  it("records nothing over another node's claim once its own lease ran out", async () => {
    const [first] = await a.repo.claim(await a.repo.findDue(T0, 1), T0, LEASE_MS, new Map());
    // Node a stalls past its lease; node b finds the recipient due again and takes it.
    const later = T0 + LEASE_MS + 1;
    const again = (await b.repo.findDue(later, 10)).find((r) => r.id === first!.id)!;
    expect(again).toBeDefined();
    const [second] = await b.repo.claim([again], later, LEASE_MS, new Map());
    expect(second!.lease).not.toBe(first!.lease);

    expect(await a.repo.record(second!.email_seq, 'p1', 'e0', CONN, [delivered(first!)], later + 5, first!.lease)).toBe(
      0,
    );
    expect(await one('SELECT status, attempts, lease_token FROM recipients WHERE id = $1', [first!.id])).toEqual({
      status: 'SENDING',
      attempts: 2,
      lease_token: second!.lease,
    });
    expect(await one("SELECT count(*)::int AS n FROM email_events WHERE type = 'delivered'")).toEqual({ n: 0 });

    expect(
      await b.repo.record(second!.email_seq, 'p1', 'e0', CONN, [delivered(second!)], later + 6, second!.lease),
    ).toBe(1);
    expect(await one('SELECT status, lease_token FROM recipients WHERE id = $1', [first!.id])).toEqual({
      status: 'DELIVERED',
      lease_token: null,
    });
    const events = await a.pool.query<{ type: string }>(
      "SELECT type FROM email_events WHERE type IN ('smtp_connected', 'sent', 'delivered') ORDER BY seq",
    );
    expect(events.rows.map((r) => r.type)).toEqual(['smtp_connected', 'sent', 'delivered']);
  });

  it('releases only the rows of its own claim, and a hard bounce suppresses in the same transaction', async () => {
    const rows = await a.repo.claim(await a.repo.findDue(T0, 4), T0, LEASE_MS, new Map());
    expect(rows).toHaveLength(4);
    await b.repo.release(
      rows.map((r) => r.id),
      'not-this-claim',
    );
    expect(await one("SELECT count(*)::int AS n FROM recipients WHERE status = 'SENDING'")).toEqual({ n: 4 });
    await a.repo.release(
      rows.slice(0, 3).map((r) => r.id),
      rows[0]!.lease,
    );
    expect(await one("SELECT count(*)::int AS n FROM recipients WHERE status = 'SENDING'")).toEqual({ n: 1 });
    expect(await one('SELECT attempts, lease_token FROM recipients WHERE id = $1', [rows[0]!.id])).toEqual({
      attempts: 0,
      lease_token: null,
    });

    const last = rows[3]!;
    const bounce: RecipientOutcome = {
      recipient_id: last.id,
      address: last.address,
      attempts: 1,
      delay_notified: 0,
      waited_ms: 0,
      decision: {
        kind: 'bounced',
        bounce_type: 'hard',
        category: 'invalid-recipient',
        reason: 'no such user',
        suppress: true,
        reply: { code: 550, enhanced: '5.1.1', text: 'no such user' },
        rule: { by: 'text', matched: 'no such user' },
      } as never,
      detail: '550 5.1.1 no such user',
    };
    expect(await a.repo.record(last.email_seq, 'p1', 'e0', CONN, [bounce], T0 + 1000, last.lease)).toBe(1);
    expect(await one('SELECT reason FROM suppressions WHERE email = $1', [last.address])).toEqual({
      reason: 'HARD_BOUNCE',
    });
    expect(await one('SELECT status FROM recipients WHERE id = $1', [last.id])).toEqual({ status: 'BOUNCED' });
    expect(await a.repo.queueStats()).toEqual({ recipients: 199, oldest: new Date(T0).toISOString() });
    expect((await a.repo.explain('e0')).map((q) => q.status).sort()).toContain('BOUNCED');
  });

  it('turns a delivered recipient BOUNCED on a late DSN, and COMPLAINED on a complaint, each with its suppression', async () => {
    const rows = await a.repo.claim(await a.repo.findDue(T0, 2), T0, LEASE_MS, new Map());
    const [r1, r2] = rows as [LeasedRow, LeasedRow];
    expect(await a.repo.record(r1.email_seq, 'p1', 'e0', CONN, [delivered(r1), delivered(r2)], T0 + 10, r1.lease)).toBe(
      2,
    );
    const found = await b.repo.findRecipient(r1.email_seq, r1.address.toUpperCase());
    expect(found).toEqual({ id: r1.id, address: r1.address, status: 'DELIVERED' });
    const ref = (r: LeasedRow) => ({
      seq: r.email_seq,
      projectId: 'p1',
      emailId: 'e0',
      recipientId: r.id,
      address: r.address,
    });
    const bounce = {
      kind: 'bounced',
      bounce_type: 'hard',
      category: 'invalid-recipient',
      reason: 'user unknown',
      suppress: true,
      reply: { code: 550, enhanced: '5.1.1', text: '550 5.1.1 user unknown' },
      rule: { by: 'text', matched: 'user unknown' },
    } as never;
    expect(await b.repo.recordLateBounce(ref(r1), bounce, 'dsn', T0 + 1000)).toBe(true);
    expect(await a.repo.recordLateBounce(ref(r1), bounce, 'dsn', T0 + 2000)).toBe(false);
    expect(
      await one('SELECT status, last_error, mx_host, delivered_at FROM recipients WHERE id = $1', [r1.id]),
    ).toEqual({
      status: 'BOUNCED',
      last_error: 'dsn: 550 5.1.1 user unknown',
      mx_host: 'mx.example.net',
      delivered_at: null,
    });
    expect(await b.repo.recordComplaint(ref(r2), 'abuse', 'arf', T0 + 3000)).toBe(true);
    expect(await b.repo.recordComplaint(ref(r2), 'abuse', 'arf', T0 + 4000)).toBe(false);
    const sup = await a.pool.query('SELECT email, reason FROM suppressions ORDER BY reason');
    expect(sup.rows).toEqual([
      { email: r2.address, reason: 'COMPLAINT' },
      { email: r1.address, reason: 'HARD_BOUNCE' },
    ]);
    const events = await a.pool.query<{ type: string }>(
      "SELECT type FROM email_events WHERE type IN ('bounced', 'complained') ORDER BY seq",
    );
    expect(events.rows.map((r) => r.type)).toEqual(['bounced', 'complained']);
  });
});

// A server's tables are mostly history (delivered recipients, their next_attempt_at NULL, and
// DELIVERED emails), and PostgreSQL's statistics say so; a burst then fills the queue with rows
// the statistics have not seen. The group commit runs the claim's statements prepared, planned
// once for any ids and time (the generic plan): they must find their rows by key, not walk the
// queue through an index that the statistics take for nearly empty.
describe('the claim on PostgreSQL, whatever the statistics say', () => {
  beforeAll(async () => {
    await queue(1, 0);
    const at = new Date(T0).toISOString();
    await a.pool.query(
      `INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
       SELECT 'd' || g, 'p1', 'LIVE', 'DELIVERED', 'a@example.com', '[]', 's', $1 FROM generate_series(1, 3000) g`,
      [at],
    );
    await a.pool.query(
      `INSERT INTO recipients (email_seq, project_id, address, address_lc, kind, status, updated_at, domain)
       SELECT seq, 'p1', 'h' || seq || '@example.net', 'h' || seq || '@example.net', 'to', 'DELIVERED', $1, 'example.net'
       FROM emails`,
      [at],
    );
    await a.pool.query('ANALYZE emails, recipients');
    await a.pool.query(
      `INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
       SELECT 'q' || g, 'p1', 'LIVE', 'QUEUED', 'a@example.com', '[]', 's', $1 FROM generate_series(1, 3000) g`,
      [at],
    );
    await a.pool.query(
      `INSERT INTO recipients (email_seq, project_id, address, address_lc, kind, status, next_attempt_at, updated_at, domain)
       SELECT seq, 'p1', 'q' || seq || '@example.net', 'q' || seq || '@example.net', 'to', 'QUEUED', $1, $1, 'example.net'
       FROM emails WHERE status = 'QUEUED'`,
      [at],
    );
  });

  const plan = async (sql: string) =>
    (await a.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (GENERIC_PLAN) ${sql}`)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');

  it('leases recipients found by their ids, not by walking recipients_due', async () => {
    const p = await plan(CLAIM_ROWS);
    expect(p).toContain('recipients_pkey');
    expect(p).not.toContain('recipients_due');
  });

  it('stamps emails found by their seq, not by walking the QUEUED ones', async () => {
    // As the claim runs it: the stamp with its events in one statement (withEvents).
    const stamp = stampsUpdate([{ seq: 1, message_id: '<m@x>', dkim: null, spf_domain: 'x', from_domain: 'x' }])!;
    const events = eventsInsert([[1, 'sending', {}]], new Date(T0).toISOString(), stamp.params.length + 1);
    const p = await plan(`WITH ev AS (${events.sql}) ${stamp.sql}`);
    expect(p).toContain('emails_pkey');
    expect(p).not.toContain('emails_project_status');
  });
});
