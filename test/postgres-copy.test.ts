import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/db.ts';
import { openPostgres, type PgPool } from '../src/store/pg.ts';
import { markServing } from '../src/store/backup.ts';
import { runSvc, SVC_ENTRY } from './cli-runner.ts';
import { createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { freshPgDatabase } from './postgres/db.ts';

// svc db copy (issue 17, item 4): the data dir's SQLite database into an empty PostgreSQL one,
// table by table, resumable, with nothing copied twice and no trigger run twice.

const COPIED = [
  'users',
  'organizations',
  'projects',
  'memberships',
  'invitations',
  'api_keys',
  'audit_logs',
  'domains',
  'domain_dkim_keys',
  'project_domains',
  'dmarc_reports',
  'dmarc_report_rows',
  'templates',
  'template_versions',
  'emails',
  'email_bodies',
  'email_tags',
  'attachments',
  'email_events',
  'email_stats',
  'recipients',
  'destination_throttles',
  'mta_sts_policies',
  'tls_report_counts',
  'tls_reports',
  'suppressions',
  'idempotency_keys',
  'usage_counters',
  'server_settings',
  'server_secrets',
  'session_families',
  'session_tokens',
  'webhooks',
  'webhook_outbox',
  'webhook_deliveries',
  'inbound_routes',
  'received_emails',
];

/** A data dir with a little of everything: accounts, keys, a domain, templates, emails of both kinds. */
async function fill(env: TestEnv, emails: number): Promise<void> {
  const test = await env.key();
  await verifyDomain(env, 'example.com');
  const live = await env.key({ env: 'LIVE' });
  await env.app.webhooks.create(env.init.project_id, { url: 'https://hooks.example.com/', events: ['*'] });
  await env.app.suppressions.add(env.init.project_id, { email: 'gone@example.net', reason: 'HARD_BOUNCE' });
  // Received mail (issue 34): a route that holds, and a message it took, its bytes included.
  await env.app.domains.setReceiving('example.com', true);
  await env.app.receiving.createRoute(env.init.project_id, { pattern: 'desk@example.com', action: 'hold' });
  await env.app.receiving.receive(
    Buffer.from('From: Åsa <a@example.net>\r\nTo: desk@example.com\r\nSubject: Hej\r\n\r\nHello\r\n'),
    { mailFrom: 'a@example.net', rcptTo: ['desk@example.com'], remoteIp: '127.0.0.1', helo: 'example.net' },
  );
  // What delivery keeps of a destination's MTA-STS policy (no API writes it).
  await env.query(
    `INSERT INTO mta_sts_policies (domain, policy_id, mode, mx, max_age, fetched_at, expires_at)
     VALUES ('example.net', 'p1', 'enforce', '["mx.example.net"]', 86400, '2026-03-15T12:00:00.000Z', '2026-03-16T12:00:00.000Z')`,
  );
  await env.app.templates.create(env.init.project_id, {
    name: 'Welcome',
    slug: 'welcome',
    subject_template: 'Hi {{ name }}',
    html_template: '<p>Hi {{ name }}</p>',
  });
  // A layout newer than the template that names it (templates copy in id order), and a draft.
  await env.app.templates.create(env.init.project_id, {
    name: 'Brand',
    slug: 'brand',
    is_layout: true,
    subject_template: 'Brand',
    html_template: '<main>{{ content }}</main>',
  });
  await env.app.templates.update(env.init.project_id, 'welcome', { layout_id: 'brand' });
  await env.app.templates.update(env.init.project_id, 'welcome', { subject_template: 'Draft', draft: true });
  for (let i = 0; i < emails; i++) {
    const res = await env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${i % 3 === 0 ? live : test}`, 'idempotency-key': `k${i}` },
      payload: {
        from: 'news@example.com',
        to: [`r${i}@example.net`, `R${i}@Example.org`],
        cc: i % 5 === 0 ? ['gone@example.net'] : undefined,
        subject: `n${i} – ünïcode`,
        text: 'hello',
        html: '<p>hello</p>',
        tags: [`t${i % 4}`],
        attachments: [{ filename: 'a.bin', content_base64: Buffer.from([0, 1, 2, 255, i % 256]).toString('base64') }],
      },
    });
    expect(res.statusCode, res.body).toBe(202);
  }
}

/** Every row of a table, as comparable values in one order (JSON text; PostgreSQL's collation may differ). */
function sqliteRows(dir: string, table: string): unknown[] {
  const { db } = openDatabase(dir);
  try {
    return sorted(db.prepare(`SELECT * FROM "${table}"`).all());
  } finally {
    db.close();
  }
}

async function pgRows(pool: PgPool, table: string): Promise<unknown[]> {
  const rows = (await pool.query<Record<string, unknown>>(`SELECT * FROM "${table}"`)).rows;
  // The seqs of the audit log, organizations and webhooks are PostgreSQL's own (SQLite's
  // rowid): compared by the order they give.
  if (['audit_logs', 'organizations', 'webhooks'].includes(table)) for (const r of rows) delete r.seq;
  return sorted(rows);
}

const sorted = (rows: unknown[]) =>
  rows
    .map(normal)
    .map((r) => [JSON.stringify(r), r] as const)
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
    .map(([, r]) => r);

const normal = (row: unknown) =>
  Object.fromEntries(
    Object.entries(row as Record<string, unknown>).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('hex') : v]),
  );

describe('svc db copy', () => {
  let dir: string;
  let work: string;

  beforeAll(async () => {
    const env = await createTestEnv();
    await fill(env, 60);
    await env.server.close();
    await env.app.close();
    dir = env.dir;
    work = mkdtempSync(join(tmpdir(), 'svc-copy-'));
  });
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies every table row for row, keys and bytes included, and new rows continue after the copied keys', async () => {
    const { url, drop } = await freshPgDatabase('copy');
    const pool = await openPostgres(url);
    try {
      const r = await runSvc(work, ['db', 'copy', '--json', '--data-dir', dir, '--database', url]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = r.json();
      expect(out).toMatchObject({ database: url, resumed: false });
      expect(Object.keys(out.tables)).toEqual(COPIED);
      expect(out.tables.emails).toBe(60);
      for (const t of COPIED) {
        const lite = sqliteRows(dir, t);
        expect(out.tables[t], t).toBe(lite.length);
        expect(await pgRows(pool, t), t).toEqual(lite);
      }
      // The audit log reads in the order it was written, as on SQLite.
      const { db } = openDatabase(dir);
      const written = db.prepare('SELECT id FROM audit_logs ORDER BY rowid').all();
      db.close();
      expect((await pool.query('SELECT id FROM audit_logs ORDER BY seq')).rows).toEqual(written);
      // The triggers did not run again: one outbox row and one stats count per event, as in SQLite.
      expect(await pgRows(pool, 'webhook_outbox')).toHaveLength(60);
      const stats = await pool.query<{ n: number }>('SELECT sum(count)::int AS n FROM email_stats');
      expect(stats.rows[0]!.n).toBe(60);
      const seq = await pool.query<{ max: number }>('SELECT max(seq) AS max FROM emails');
      const added = await pool.query<{ seq: number }>(
        `INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
         SELECT 'new', project_id, 'TEST', 'SIMULATED', 'a@b.c', '[]', 's', 'x' FROM emails LIMIT 1 RETURNING seq`,
      );
      expect(added.rows[0]!.seq).toBe(seq.rows[0]!.max + 1);
      // A finished copy is not done again on top of itself.
      const again = await runSvc(work, ['db', 'copy', '--data-dir', dir, '--database', url]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /^error: store_unavailable: the PostgreSQL database already holds a finished copy of /,
      );
    } finally {
      await pool.end();
      await drop();
    }
  });

  it('takes up a copy killed midway where it stopped, with nothing copied twice', async () => {
    const { url, drop } = await freshPgDatabase('resume');
    const pool = await openPostgres(url);
    try {
      // Small batches, and a kill while the batch that brings the emails to 20 waits inside its
      // transaction: an advisory lock this test holds stops it there, so the kill lands midway
      // however fast the copy runs (a race on the count did not, on a loaded machine).
      await pool.query(`CREATE TABLE svc_copy (
         id INTEGER PRIMARY KEY CHECK (id = 1), source TEXT NOT NULL, started_at TEXT NOT NULL,
         finished_at TEXT, progress TEXT NOT NULL)`);
      await pool.query(`CREATE FUNCTION hold_copy() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF coalesce((NEW.progress::jsonb -> 'emails' ->> 'copied')::int, 0) >= 20 THEN
             PERFORM pg_advisory_xact_lock(4242);
           END IF;
           RETURN NEW;
         END $$`);
      await pool.query('CREATE TRIGGER hold BEFORE UPDATE ON svc_copy FOR EACH ROW EXECUTE FUNCTION hold_copy()');
      const holder = await pool.connect();
      await holder.query('SELECT pg_advisory_lock(4242)');
      const child = spawn(
        process.execPath,
        [SVC_ENTRY, 'db', 'copy', '--batch', '5', '--data-dir', dir, '--database', url],
        { stdio: 'ignore' },
      );
      const exited = new Promise((r) => child.once('exit', r));
      const waiting = () =>
        pool
          .query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
          .then((r) => r.rows[0]!.n);
      let gone = false;
      void exited.then(() => (gone = true));
      while (!gone && (await waiting()) === 0) await new Promise((r) => setTimeout(r, 5));
      expect(gone, 'the copy ended before it reached the held batch').toBe(false);
      child.kill('SIGKILL');
      await exited;
      // The waiting batch goes on once the lock is free, then finds its client gone and rolls back.
      await holder.query('SELECT pg_advisory_unlock(4242)');
      holder.release();
      const partial = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM emails')).rows[0]!.n;
      expect(partial).toBe(15);
      await pool.query('DROP TRIGGER hold ON svc_copy');

      const r = await runSvc(work, ['db', 'copy', '--json', '--data-dir', dir, '--database', url]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.json()).toMatchObject({ resumed: true });
      for (const t of COPIED) expect(await pgRows(pool, t), t).toEqual(sqliteRows(dir, t));
    } finally {
      await pool.end();
      await drop();
    }
  });

  it('refuses a database that holds other data, a running server, and a missing target', async () => {
    const { url, drop } = await freshPgDatabase('refuse');
    try {
      const other = await openPostgres(url);
      await runSvc(work, ['migrate', '--database', url]);
      await other.query(
        "INSERT INTO users (id, email, password_hash, created_at) VALUES ('u', 'someone@else.test', 'h', 'x')",
      );
      await other.end();
      const full = await runSvc(work, ['db', 'copy', '--data-dir', dir, '--database', url]);
      expect(full.code).toBe(1);
      expect(full.stderr).toBe(
        'error: store_unavailable: the PostgreSQL database already holds data (table users): copy into an empty database\n',
      );

      const unmark = markServing(dir);
      try {
        const running = await runSvc(work, ['db', 'copy', '--data-dir', dir, '--database', url]);
        expect(running.code).toBe(1);
        expect(running.stderr).toMatch(/^error: store_unavailable: svc serve \(pid \d+\) runs on .*: stop it first/);
      } finally {
        unmark();
      }

      const none = await runSvc(work, ['db', 'copy', '--data-dir', dir], { SVC_DATABASE_URL: '' });
      expect(none.code).toBe(2);
      expect(none.stderr).toBe('error: svc db copy needs the target: --database postgres://… (SVC_DATABASE_URL)\n');
    } finally {
      await drop();
    }
  });
});
