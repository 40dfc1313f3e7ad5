import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createPgSuppressionsRepo } from '../src/suppressions/repo-pg.ts';
import { createPgEmailsRepo, type PgEmailsRepo } from '../src/emails/repo-pg.ts';
import type { AcceptOptions, NewEmail, Recipient } from '../src/emails/repo.ts';
import { newEmail } from './postgres/email-fixture.ts';
import { createPgIdempotency } from '../src/idempotency/repo-pg.ts';
import { createPgUsage } from '../src/limits/usage-pg.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// The accept of an email on PostgreSQL (issue 17): what SQLite's acceptEmail writes, in few
// statements, with the suppression list, volume, idempotency and the one trial email held
// across two nodes.

type Node = PgNode & { emails: PgEmailsRepo };
let a: Node;
let b: Node;
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await migratedPgDatabase('emails');
  drop = db.drop;
  const node = async (): Promise<Node> => {
    const n = await pgNode(db.url);
    const emails = createPgEmailsRepo(n.pool, n.tx, {
      usage: createPgUsage(n.pool),
      idempotency: createPgIdempotency(n.pool),
      audit: createPgAuditWriter(),
      suppressions: createPgSuppressionsRepo(n.pool, n.tx, createPgAuditWriter()),
    });
    return { ...n, emails };
  };
  [a, b] = [await node(), await node()];
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

beforeEach(async () => {
  await a.pool.query(
    `TRUNCATE organizations, emails, suppressions, usage_counters, idempotency_keys, email_stats, webhooks
       RESTART IDENTITY CASCADE;
     INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
     INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x');
     INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
       VALUES ('w1', 'p1', 'https://hooks.example.com/', '["*"]', 's', 'x', 'x')`,
  );
});

let n = 0;
function email(over: Partial<NewEmail> = {}): NewEmail {
  const id = `e${++n}`;
  return newEmail(id, {
    api_key_id: 'k1',
    from_name: 'News',
    to: ['Ada@Example.org', 'bob@example.net'],
    cc: ['Gone@example.net'],
    subject: 'Héllo',
    tags: ['welcome', 'welcome', 'b'],
    headers: { 'X-Campaign': '42' },
    html: '<p>hi</p>',
    text: 'hi',
    attachments: [
      { filename: 'a.bin', content_type: 'application/octet-stream', content: Buffer.from([0, 1, 255]) },
      { filename: 'logo.png', content_type: 'image/png', content: Buffer.from('png'), content_id: 'logo' },
    ],
    ...over,
  });
}
const recipientsOf = (e: NewEmail): Recipient[] => [
  ...e.to.map((address) => ({ address, kind: 'to' as const })),
  ...(e.cc ?? []).map((address) => ({ address, kind: 'cc' as const })),
];
const LIVE: AcceptOptions = {
  suppress: true,
  volume: { orgId: 'o1', limits: { monthly: 1000, daily: null }, now: Date.parse('2026-11-26T12:00:00.000Z') },
  idempotency: null,
};

async function rows(sql: string, params: unknown[] = []) {
  return (await a.pool.query(sql, params)).rows;
}

describe('the accept of an email on PostgreSQL', () => {
  it('writes the email, its body, recipients, tags, attachments and first event, and the triggers run', async () => {
    await a.pool.query(
      "INSERT INTO suppressions (project_id, email, reason, created_at) VALUES ('p1', 'gone@example.net', 'HARD_BOUNCE', 'x')",
    );
    const e = email();
    const r = await a.emails.acceptEmail(e, recipientsOf(e), LIVE);
    expect(r).toEqual({
      replay: false,
      response: {
        id: e.id,
        status: 'QUEUED',
        skipped_recipients: [{ email: 'Gone@example.net', reason: 'HARD_BOUNCE' }],
      },
    });
    const row = await b.emails.findById(e.id);
    expect(row).toMatchObject({
      id: e.id,
      to_emails: '["Ada@Example.org","bob@example.net"]',
      cc_emails: '[]',
      subject: 'Héllo',
      tags: '["welcome","welcome","b"]',
      headers: '{"X-Campaign":"42"}',
      dkim_signing_status: 'not_signed',
      is_trial: 0,
      html_body: '<p>hi</p>',
      text_body: 'hi',
    });
    expect(
      await rows('SELECT address, address_lc, domain, kind, status, next_attempt_at FROM recipients ORDER BY id'),
    ).toEqual([
      {
        address: 'Ada@Example.org',
        address_lc: 'ada@example.org',
        domain: 'example.org',
        kind: 'to',
        status: 'QUEUED',
        next_attempt_at: e.created_at,
      },
      {
        address: 'bob@example.net',
        address_lc: 'bob@example.net',
        domain: 'example.net',
        kind: 'to',
        status: 'QUEUED',
        next_attempt_at: e.created_at,
      },
    ]);
    expect(await rows('SELECT tag FROM email_tags ORDER BY tag')).toEqual([{ tag: 'b' }, { tag: 'welcome' }]);
    expect(
      await rows('SELECT position, filename, size, content, content_id FROM attachments ORDER BY position'),
    ).toEqual([
      { position: 0, filename: 'a.bin', size: 3, content: Buffer.from([0, 1, 255]), content_id: null },
      { position: 1, filename: 'logo.png', size: 3, content: Buffer.from('png'), content_id: 'logo' },
    ]);
    expect((await b.emails.listEvents(row!.seq)).map((ev) => [ev.id, ev.type])).toEqual([[`ev-${e.id}`, 'queued']]);
    expect(await rows('SELECT bucket_hour, type, count FROM email_stats')).toEqual([
      { bucket_hour: '2026-11-26T12', type: 'queued', count: 1 },
    ]);
    expect(await rows('SELECT webhook_id, event_id, email_status FROM webhook_outbox')).toEqual([
      { webhook_id: 'w1', event_id: `ev-${e.id}`, email_status: 'QUEUED' },
    ]);
    // Two recipients kept, two counted, in the month and the day.
    expect(await rows('SELECT period, count FROM usage_counters ORDER BY period')).toEqual([
      { period: '2026-11', count: 2 },
      { period: '2026-11-26', count: 2 },
    ]);
  });

  it('refuses an email whose every recipient is suppressed, and counts nothing', async () => {
    await a.pool.query(
      "INSERT INTO suppressions (project_id, email, reason, created_at) VALUES ('p1', 'x@example.net', 'COMPLAINT', 'x')",
    );
    const e = email({ to: ['X@example.net'], cc: null });
    await expect(a.emails.acceptEmail(e, recipientsOf(e), LIVE)).rejects.toMatchObject({
      code: 'all_recipients_suppressed',
      details: { skipped_recipients: [{ email: 'X@example.net', reason: 'COMPLAINT' }] },
    });
    expect(await rows('SELECT count(*)::int AS n FROM emails')).toEqual([{ n: 0 }]);
  });

  it('makes one email of one Idempotency-Key sent on two nodes at once, and refuses it with another body', async () => {
    const opts = (hash: string): AcceptOptions => ({
      ...LIVE,
      idempotency: { key: 'k-1', hash, expiresAt: '2026-11-27T12:00:00.000Z' },
    });
    const sends = Array.from({ length: 6 }, (_v, i) => {
      const e = email({ cc: null });
      return (i % 2 ? a : b).emails.acceptEmail(e, recipientsOf(e), opts('h'));
    });
    const results = await Promise.all(sends);
    const made = results.filter((r) => !r.replay);
    expect(made).toHaveLength(1);
    expect(new Set(results.map((r) => r.response.id))).toEqual(new Set([made[0]!.response.id]));
    expect(await rows('SELECT count(*)::int AS n FROM emails')).toEqual([{ n: 1 }]);
    const other = email({ cc: null });
    await expect(a.emails.acceptEmail(other, recipientsOf(other), opts('another body'))).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    expect(await b.emails.findIdempotent('p1', 'k-1', 'h', '2026-11-26T13:00:00.000Z')).toEqual({
      replay: true,
      response: made[0]!.response,
    });
  });

  const trial = () => {
    const e = email({
      trial: true,
      cc: null,
      env: 'TEST',
      status: 'SIMULATED',
      event: { id: `ev${++n}`, type: 'simulated', data: {} },
    });
    return [e, recipientsOf(e)] as const;
  };

  it('sends the one onboarding-trial email once, though two nodes try at the same moment', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, (_v, i) => (i % 2 ? a : b).emails.acceptEmail(...trial(), { ...LIVE, volume: null })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(r.reason).toMatchObject({ code: 'trial_restricted', details: { reason: 'trial_used' } });
    }
    expect(await rows('SELECT count(*)::int AS n FROM emails WHERE is_trial = 1')).toEqual([{ n: 1 }]);
  });

  it('refuses a trial email whose check passed while another node was inserting its own', async () => {
    // Another node's trial send, inserted but not yet committed: this node's check cannot see it,
    // its insert waits on the unique index, and fails once the other commits.
    const other = await a.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at, is_trial)
         VALUES ('other-trial', 'p1', 'TEST', 'SIMULATED', 'a@x.test', '[]', 's', 'x', 1)`,
      );
      const [e, r] = trial();
      const pending = b.emails.acceptEmail(e, r, { ...LIVE, volume: null });
      // This send's insert waits on the other's row until it commits.
      while ((await rows("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).length === 0) {
        await new Promise((res) => setTimeout(res, 2));
      }
      await other.query('COMMIT');
      await expect(pending).rejects.toMatchObject({ code: 'trial_restricted', details: { reason: 'trial_used' } });
    } finally {
      other.release();
    }
    expect(await rows('SELECT id FROM emails WHERE is_trial = 1')).toEqual([{ id: 'other-trial' }]);
  });
});
