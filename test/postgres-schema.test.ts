import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/db.ts';
import { StoreOpenError } from '../src/store/open-error.ts';
import { loadPgMigrations, migratePostgres, openPostgres, pgSchemaVersion, type PgPool } from '../src/store/pg.ts';
import { freshPgDatabase } from './postgres/db.ts';

const LATEST = loadPgMigrations().at(-1)!.version;

/** Tables, columns, indexes and triggers of the SQLite schema, in PostgreSQL's words. */
function sqliteSchema() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-schema-'));
  const { db } = openDatabase(join(dir, 'data'), { create: true });
  try {
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((t) => t.name);
    const columns: Record<string, Record<string, { type: string; notnull: boolean }>> = {};
    for (const t of tables) {
      columns[t] = {};
      for (const c of db.prepare(`PRAGMA table_info("${t}")`).all() as {
        name: string;
        type: string;
        notnull: number;
        pk: number;
      }[]) {
        // A rowid primary key is never null, declared or not.
        columns[t][c.name] = { type: c.type.toUpperCase(), notnull: c.notnull === 1 || c.pk > 0 };
      }
    }
    const named = (type: string) =>
      db
        .prepare<[string], { name: string }>(
          "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .all(type)
        .map((r) => r.name);
    return { tables, columns, indexes: named('index'), triggers: named('trigger') };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pgSchema(pool: PgPool) {
  const cols = await pool.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    `SELECT table_name, column_name, CASE WHEN data_type = 'USER-DEFINED' THEN udt_name ELSE data_type END AS data_type,
            is_nullable
     FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'svc_schema'`,
  );
  const columns: Record<string, Record<string, { type: string; notnull: boolean }>> = {};
  for (const c of cols.rows) {
    (columns[c.table_name] ??= {})[c.column_name] = { type: c.data_type, notnull: c.is_nullable === 'NO' };
  }
  // Indexes svc named; PostgreSQL's own for keys and UNIQUE columns end in _pkey and _key.
  const idx = await pool.query<{ indexname: string }>(
    `SELECT indexname FROM pg_indexes WHERE schemaname = 'public'
       AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key' ORDER BY indexname`,
  );
  const trg = await pool.query<{ tgname: string }>(
    'SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname',
  );
  return {
    tables: Object.keys(columns).sort(),
    columns,
    indexes: idx.rows.map((r) => r.indexname),
    triggers: trg.rows.map((r) => r.tgname),
  };
}

/**
 * What PostgreSQL has that SQLite has not, on purpose: the audit log's order of writing, which
 * SQLite keeps in its hidden rowid (migrations-pg/0004_audit_seq.sql), and the per-key request
 * counts and the failed logins and AUTH that one SQLite server keeps in its memory
 * (0005_rate_windows.sql, 0007_failure_windows.sql).
 */
const PG_ONLY = {
  tables: ['failure_windows', 'rate_windows'],
  columns: ['audit_logs.seq', 'organizations.seq', 'webhooks.seq'],
  indexes: ['audit_logs_org_seq', 'failure_windows_start'],
};
/** An index only SQLite has: the subjects for the dashboard's search (migrations/0024_email_search.sql). */
const SQLITE_ONLY = { indexes: ['emails_project_subject'] };

/** The PostgreSQL types a SQLite declared type may become. */
const COMPATIBLE: Record<string, string[]> = {
  TEXT: ['text', 'citext'],
  INTEGER: ['integer', 'bigint'],
  BLOB: ['bytea'],
};

describe('the PostgreSQL schema', () => {
  let url: string;
  let drop: () => Promise<void>;
  let pool: PgPool;

  beforeAll(async () => {
    ({ url, drop } = await freshPgDatabase('schema'));
    pool = await openPostgres(url);
  });
  afterAll(async () => {
    await pool?.end();
    await drop?.();
  });

  it('migrates an empty database to the latest version, and a second run applies nothing', async () => {
    expect(await pgSchemaVersion(pool)).toBe(0);
    const first = await migratePostgres(pool);
    expect(first).toEqual({ from: 0, to: LATEST, applied: loadPgMigrations().map((m) => m.name) });
    expect(await pgSchemaVersion(pool)).toBe(LATEST);
    expect(await migratePostgres(pool)).toEqual({ from: LATEST, to: LATEST, applied: [] });
  });

  it('has every table, column, index and trigger of the SQLite schema, with the same types and NOT NULLs', async () => {
    const lite = sqliteSchema();
    const pgs = await pgSchema(pool);
    expect(pgs.tables.filter((t) => !PG_ONLY.tables.includes(t))).toEqual(lite.tables);
    expect(pgs.tables).toEqual(expect.arrayContaining(PG_ONLY.tables));
    for (const t of lite.tables) {
      const own = Object.keys(pgs.columns[t]!).filter((c) => !PG_ONLY.columns.includes(`${t}.${c}`));
      expect(own.sort(), t).toEqual(Object.keys(lite.columns[t]!).sort());
      for (const [name, c] of Object.entries(lite.columns[t]!)) {
        const other = pgs.columns[t]![name]!;
        expect(COMPATIBLE[c.type], `${t}.${name} is ${c.type} in SQLite`).toContain(other.type);
        expect(other.notnull, `${t}.${name} NOT NULL`).toBe(c.notnull);
      }
    }
    expect(pgs.indexes.filter((i) => !PG_ONLY.indexes.includes(i))).toEqual(
      lite.indexes.filter((i) => !SQLITE_ONLY.indexes.includes(i)),
    );
    expect(pgs.indexes).toEqual(expect.arrayContaining(PG_ONLY.indexes));
    expect(pgs.columns.audit_logs).toHaveProperty('seq');
    expect(pgs.triggers).toEqual(lite.triggers);
  });

  it('moves the auth epoch on changes to what authenticates, and not on last_used_at', async () => {
    const epoch = async () => (await pool.query<{ n: number }>('SELECT n FROM auth_epoch')).rows[0]!.n;
    await pool.query(
      `INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', '2026-11-26T00:00:00.000Z');
       INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', '2026-11-26T00:00:00.000Z');
       INSERT INTO api_keys (id, project_id, name, prefix, key_hash, permissions, env, created_at)
         VALUES ('k1', 'p1', 'k', 'svc_test_', 'h1', 'FULL_ACCESS', 'TEST', '2026-11-26T00:00:00.000Z')`,
    );
    const before = await epoch();
    expect(typeof before).toBe('number');
    await pool.query("UPDATE api_keys SET last_used_at = '2026-11-26T00:01:00.000Z' WHERE id = 'k1'");
    expect(await epoch()).toBe(before);
    await pool.query("UPDATE api_keys SET revoked_at = '2026-11-26T00:02:00.000Z' WHERE id = 'k1'");
    expect(await epoch()).toBe(before + 1);
    await pool.query("UPDATE organizations SET plan = 'PAID' WHERE id = 'o1'");
    expect(await epoch()).toBe(before + 2);
  });

  it('rolls events up by project, hour and type, and fills the webhook outbox as SQLite does', async () => {
    await pool.query(
      `INSERT INTO webhooks (id, project_id, url, events, secret, is_active, created_at, updated_at) VALUES
         ('w-all', 'p1', 'https://a.test/', '["*"]', 's', 1, 'x', 'x'),
         ('w-delivered', 'p1', 'https://b.test/', '["delivered"]', 's', 1, 'x', 'x'),
         ('w-off', 'p1', 'https://c.test/', '["queued"]', 's', 0, 'x', 'x');
       INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
         VALUES ('e1', 'p1', 'LIVE', 'QUEUED', 'a@x.test', '[]', 's', '2026-11-26T10:15:00.000Z')`,
    );
    const seq = (await pool.query<{ seq: number }>("SELECT seq FROM emails WHERE id = 'e1'")).rows[0]!.seq;
    expect(typeof seq).toBe('number');
    for (const [id, type, at] of [
      ['ev1', 'queued', '2026-11-26T10:15:00.000Z'],
      ['ev2', 'queued', '2026-11-26T10:59:59.999Z'],
      ['ev3', 'sending', '2026-11-26T11:00:00.000Z'],
      ['ev4', 'delivered', '2026-11-26T11:00:01.000Z'],
    ]) {
      await pool.query('INSERT INTO email_events (id, email_seq, type, created_at) VALUES ($1, $2, $3, $4)', [
        id,
        seq,
        type,
        at,
      ]);
    }
    const stats = await pool.query('SELECT bucket_hour, type, count FROM email_stats ORDER BY bucket_hour, type');
    // `sending` is not counted (SQLite 0014's list).
    expect(stats.rows).toEqual([
      { bucket_hour: '2026-11-26T10', type: 'queued', count: 2 },
      { bucket_hour: '2026-11-26T11', type: 'delivered', count: 1 },
    ]);
    const outbox = await pool.query<{ webhook_id: string; event_id: string; skip: number; id: string }>(
      'SELECT webhook_id, event_id, skip, id FROM webhook_outbox ORDER BY seq',
    );
    expect(outbox.rows.map((r) => [r.webhook_id, r.event_id, r.skip])).toEqual([
      ['w-all', 'ev1', 0],
      ['w-off', 'ev1', 1],
      ['w-all', 'ev2', 0],
      ['w-off', 'ev2', 1],
      ['w-all', 'ev3', 0],
      ['w-all', 'ev4', 0],
      ['w-delivered', 'ev4', 0],
    ]);
    expect(new Set(outbox.rows.map((r) => r.id)).size).toBe(outbox.rows.length);
    await pool.query("DELETE FROM projects WHERE id = 'p1'");
    expect((await pool.query('SELECT count(*)::int AS n FROM email_stats')).rows[0]).toEqual({ n: 0 });
  });

  it('compares addresses and domain names without case, as COLLATE NOCASE does', async () => {
    await pool.query(
      "INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'Ada@Example.com', 'h', 'x')",
    );
    const found = await pool.query("SELECT id FROM users WHERE email = 'ada@example.COM'");
    expect(found.rows).toEqual([{ id: 'u1' }]);
    await expect(
      pool.query("INSERT INTO users (id, email, password_hash, created_at) VALUES ('u2', 'ADA@example.com', 'h', 'x')"),
    ).rejects.toThrow(/unique/);
  });
});

describe('migrating PostgreSQL', () => {
  it('applies each migration once when two nodes start together', async () => {
    const { url, drop } = await freshPgDatabase('together');
    const [a, b] = [await openPostgres(url), await openPostgres(url)];
    try {
      const results = await Promise.all([migratePostgres(a), migratePostgres(b)]);
      const applied = results.flatMap((r) => r.applied);
      expect(applied).toEqual(loadPgMigrations().map((m) => m.name));
      expect(results.map((r) => r.to)).toEqual([LATEST, LATEST]);
    } finally {
      await Promise.all([a.end(), b.end()]);
      await drop();
    }
  });

  it('refuses a database newer than this svc, and says so', async () => {
    const { url, drop } = await freshPgDatabase('newer');
    const pool = await openPostgres(url);
    try {
      await migratePostgres(pool);
      await pool.query('UPDATE svc_schema SET version = $1', [LATEST + 1]);
      const err = await migratePostgres(pool).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreOpenError);
      expect((err as Error).message).toBe(
        `the PostgreSQL database has schema version ${LATEST + 1}, newer than this svc (${LATEST}): upgrade svc`,
      );
    } finally {
      await pool.end();
      await drop();
    }
  });

  it('names the server it cannot reach, without the password', async () => {
    const err = await openPostgres('postgres://svc:s3cret@127.0.0.1:1/svc').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreOpenError);
    expect((err as Error).message).toMatch(
      /^cannot connect to PostgreSQL at postgres:\/\/svc:\*\*\*@127\.0\.0\.1:1\/svc: /,
    );
    expect((err as Error).message).not.toContain('s3cret');
  });
});
