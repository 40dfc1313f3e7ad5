import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPgMigrations, migratePostgres, openPostgres, type PgPool } from '../src/store/pg.ts';
import { freshPgDatabase } from './postgres/db.ts';

/**
 * Migration 0008 on PostgreSQL (SQLite's 0020, test/dkim-upgrade.test.ts): each domain's key
 * becomes its active RSA key, under the domain's id, so a database upgraded in place keeps
 * signing with the same key.
 */
let pool: PgPool;
let drop: () => Promise<void>;

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await freshPgDatabase('dkim-upgrade'));
  pool = await openPostgres(url);
});
afterAll(async () => {
  await pool?.end();
  await drop?.();
});

describe('upgrading a version 7 PostgreSQL database', () => {
  it('moves each domain key into domain_dkim_keys as the active RSA key', async () => {
    for (const m of loadPgMigrations().filter((m) => m.version <= 7)) await pool.query(m.sql);
    await pool.query(
      `CREATE TABLE svc_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, updated_at TEXT NOT NULL);
       INSERT INTO svc_schema VALUES (1, 7, '2026-01-10T00:00:00.000Z')`,
    );
    const at = '2026-01-10T00:00:00.000Z';
    await pool.query(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Old', 'UNLIMITED', $1)`, [
      at,
    ]);
    await pool.query(
      `INSERT INTO domains (id, organization_id, name, status, dkim_selector, dkim_private_key, dkim_public_key,
         verified_at, created_at)
       VALUES ('d1', 'o1', 'old.test', 'VERIFIED', 'svc202601', 'PEM', 'PUB', $1, $1),
              ('d2', 'o1', 'nokey.test', 'PENDING', NULL, NULL, NULL, NULL, $1)`,
      [at],
    );
    const result = await migratePostgres(pool);
    expect(result.applied[0]).toBe('0008_dkim_keys.sql');
    expect((await pool.query('SELECT * FROM domain_dkim_keys')).rows).toEqual([
      {
        id: 'd1',
        domain_id: 'd1',
        selector: 'svc202601',
        algorithm: 'rsa',
        private_key: 'PEM',
        public_key: 'PUB',
        state: 'active',
        created_at: at,
        activated_at: at,
        retire_after: null,
      },
    ]);
  });
});
