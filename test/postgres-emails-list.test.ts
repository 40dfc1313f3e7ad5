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
import type { ListQuery } from '../src/emails/schema.ts';
import { createIdempotencySql } from '../src/idempotency/index.ts';
import { createPgIdempotency } from '../src/idempotency/repo-pg.ts';
import { createUsageSql } from '../src/limits/usage.ts';
import { createPgUsage } from '../src/limits/usage-pg.ts';
import { createCommitter, type Committer } from '../src/store/committer.ts';
import { openDatabase } from '../src/store/db.ts';
import { createSuppressionsRepo } from '../src/suppressions/repo.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// The list of emails and retention on both stores (issue 17, item 1): the same emails
// accepted by each store's repository, then every kind of page and retention batch asked of
// both; they must answer the same.

const SEED = `INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
  INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x')`;
const OPTS: AcceptOptions = { suppress: false, volume: null, idempotency: null };

/** 40 emails over 40 minutes, of two senders (in two cases), three tags, two statuses, a few recipients. */
function emails(): NewEmail[] {
  return Array.from({ length: 40 }, (_v, i) => {
    return newEmail(`0192f4c1-7c2e-7b3a-9d4e-${String(i).padStart(12, '0')}`, {
      env: i % 3 ? 'TEST' : 'LIVE',
      status: i % 3 ? 'SIMULATED' : 'QUEUED',
      from_email: i % 2 ? 'News@Example.com' : 'billing@example.com',
      to: [`r${i % 5}@example.net`],
      subject: `n${i}`,
      tags: [`t${i % 3}`],
      text: `body ${i}`,
      // Two emails per minute share their time, so the cursor's tie-break by seq is walked too.
      created_at: new Date(Date.parse('2026-11-26T12:00:00.000Z') + Math.floor(i / 2) * 60_000).toISOString(),
      attachments: i % 4 ? [] : [{ filename: 'a.txt', content_type: 'text/plain', content: Buffer.from(`a${i}`) }],
      event: { id: `ev-${i}`, type: i % 3 ? 'simulated' : 'queued', data: {} },
    });
  });
}

let dir: string;
let lite: ReturnType<typeof createEmailsRepo>;
let liteTx: Committer;
let liteClose: () => Promise<void>;
let node: PgNode;
let pg: ReturnType<typeof createPgEmailsRepo>;
let drop: () => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-list-'));
  const s = openDatabase(join(dir, 'data'), { create: true });
  liteClose = s.close;
  s.db.exec(SEED);
  liteTx = createCommitter(s.db, { windowMs: 1, maxBatch: 100 });
  const audit = createAuditWriter(s.db);
  lite = createEmailsRepo(s.db, liteTx, {
    suppressions: createSuppressionsRepo(s.db, liteTx, audit),
    usage: createUsageSql(s.db),
    idempotency: createIdempotencySql(s.db),
    audit,
  });
  const db = await migratedPgDatabase('emails_list');
  drop = db.drop;
  node = await pgNode(db.url);
  await node.pool.query(SEED);
  pg = createPgEmailsRepo(node.pool, node.tx, {
    usage: createPgUsage(node.pool),
    idempotency: createPgIdempotency(node.pool),
    audit: createPgAuditWriter(),
    suppressions: createPgSuppressionsRepo(node.pool, node.tx, createPgAuditWriter()),
  });
  for (const e of emails()) {
    await lite.acceptEmail({ ...e }, [{ address: e.to[0]!, kind: 'to' }], OPTS);
    await pg.acceptEmail({ ...e }, [{ address: e.to[0]!, kind: 'to' }], OPTS);
  }
});
afterAll(async () => {
  liteTx?.close();
  await liteClose?.();
  rmSync(dir, { recursive: true, force: true });
  await node?.close();
  await drop?.();
});

const ids = (rows: { id: string }[]) => rows.map((r) => r.id.slice(-2));
const cursor = (i: number) => `0192f4c1-7c2e-7b3a-9d4e-${String(i).padStart(12, '0')}`;

describe('the list of emails and retention, on both stores', () => {
  const queries: [string, Partial<ListQuery>][] = [
    ['newest first', {}],
    ['a status', { status: 'QUEUED' }],
    ['a sender in another case', { from_email: 'news@EXAMPLE.com' }],
    ['a recipient in another case', { to_email: 'R3@Example.NET' }],
    ['a tag', { tag: 't1' }],
    ['a tag, before a cursor', { tag: 't1', before: cursor(25) }],
    ['a time window', { from: '2026-11-26T12:05:00.000Z', to: '2026-11-26T12:12:00.000Z' }],
    ['a time window, before a cursor at a shared time', { from: '2026-11-26T12:00:00.000Z', before: cursor(17) }],
    ['a time window, after a cursor', { to: '2026-11-26T12:30:00.000Z', after: cursor(10) }],
    ['after a cursor', { after: cursor(30) }],
    [
      'before a cursor, with a status and a sender',
      { before: cursor(35), status: 'SIMULATED', from_email: 'BILLING@example.com' },
    ],
    ['an unknown cursor', { before: '0192f4c1-7c2e-7b3a-9d4e-999999999999' }],
  ];
  it.each(queries)('answers the same page for %s', async (_name, q) => {
    const query = { limit: 7, ...q };
    const [x, y] = [await lite.list('p1', query), await pg.list('p1', query)];
    // Every page but the unknown cursor's holds emails, so the comparison compares something.
    expect(x.length > 0).toBe(!q.before?.endsWith('999999999999'));
    expect(ids(y)).toEqual(ids(x));
    expect(y).toEqual(x);
  });

  it('drops the same bodies and deletes the same emails, in the same batches', async () => {
    const cutoff = '2026-11-26T12:10:00.000Z';
    let page = { after: 0, held: [] as number[], limit: 6 };
    for (;;) {
      const [x, y] = [await lite.dropContentBefore(cutoff, page), await pg.dropContentBefore(cutoff, page)];
      expect(y).toEqual(x);
      if (x.done) break;
      page = { ...page, after: x.next, held: x.held };
    }
    const first = (await lite.findById(cursor(0)))!;
    expect(await pg.listAttachments(first.seq)).toEqual(await lite.listAttachments(first.seq));
    expect(await pg.findById(cursor(1))).toEqual(await lite.findById(cursor(1)));
    page = { after: 0, held: [], limit: 6 };
    const [x, y] = [await lite.deleteBefore(cutoff, page), await pg.deleteBefore(cutoff, page)];
    expect(y).toEqual(x);
    expect(ids(await pg.list('p1', { limit: 100 }))).toEqual(ids(await lite.list('p1', { limit: 100 })));
  });
});
