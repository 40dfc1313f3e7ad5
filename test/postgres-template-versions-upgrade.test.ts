import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPgMigrations, migratePostgres, openPostgres, type PgPool } from '../src/store/pg.ts';
import { freshPgDatabase } from './postgres/db.ts';

/**
 * Migration 0021 on PostgreSQL (SQLite's 0033, test/template-versions-upgrade.test.ts): each
 * template's content becomes its current version, published.
 */
let pool: PgPool;
let drop: () => Promise<void>;

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await freshPgDatabase('template-versions-upgrade'));
  pool = await openPostgres(url);
});
afterAll(async () => {
  await pool?.end();
  await drop?.();
});

describe('upgrading a PostgreSQL database from before template versions', () => {
  it('makes each template its current version, published, with no layout', async () => {
    for (const m of loadPgMigrations().filter((m) => m.version < 21)) await pool.query(m.sql);
    await pool.query(
      `CREATE TABLE svc_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, updated_at TEXT NOT NULL);
       INSERT INTO svc_schema VALUES (1, 20, '2026-01-10T00:00:00.000Z')`,
    );
    const at = '2026-01-10T00:00:00.000Z';
    await pool.query(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Old', 'UNLIMITED', $1)`, [
      at,
    ]);
    await pool.query(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', $1)`, [at]);
    await pool.query(
      `INSERT INTO templates (id, project_id, name, slug, subject_template, html_template, text_template, variables,
         version, created_at, updated_at)
       VALUES ('t1', 'p1', 'W', 'welcome', 'Hi', '<p>v3</p>', NULL, '{"name":"x"}', 3, $1, '2026-01-11T00:00:00.000Z')`,
      [at],
    );
    const result = await migratePostgres(pool);
    expect(result.applied).toContain('0021_template_versions.sql');
    expect((await pool.query('SELECT version, published_version, is_layout, layout_id FROM templates')).rows).toEqual([
      { version: 3, published_version: 3, is_layout: 0, layout_id: null },
    ]);
    expect((await pool.query('SELECT * FROM template_versions')).rows).toEqual([
      {
        template_id: 't1',
        version: 3,
        subject_template: 'Hi',
        html_template: '<p>v3</p>',
        text_template: null,
        variables: '{"name":"x"}',
        layout_id: null,
        created_at: '2026-01-11T00:00:00.000Z',
      },
    ]);
  });
});
