import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { loadMigrations } from '../src/store/db.ts';

/**
 * Migration 0033 (issue 35): a data dir made before template versions keeps sending each
 * template as it was, its content becoming its current version, published.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-template-versions-upgrade-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('upgrading a data dir from before template versions', () => {
  it('makes each template its current version, published, with no layout', async () => {
    const old = new Database(join(dir, 'svc.sqlite'));
    old.pragma('journal_mode = WAL');
    for (const m of loadMigrations().filter((m) => m.version < 33)) old.exec(m.sql);
    old.pragma('user_version = 32');
    const at = '2026-01-10T00:00:00.000Z';
    old.prepare(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Old', 'UNLIMITED', ?)`).run(at);
    old.prepare(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', ?)`).run(at);
    old
      .prepare(
        `INSERT INTO templates (id, project_id, name, slug, subject_template, html_template, text_template, variables,
           version, created_at, updated_at)
         VALUES ('t1', 'p1', 'W', 'welcome', 'Hi {{ name }}', '<p>v3</p>', NULL, '{"name":"x"}', 3, ?, ?)`,
      )
      .run(at, '2026-01-11T00:00:00.000Z');
    old.close();

    const app = await createApp(loadConfig({ flags: { dataDir: dir } }), { clock: new FakeClock(at) });
    try {
      expect(await app.templates.getTemplate('p1', 'welcome')).toMatchObject({
        version: 3,
        published_version: 3,
        is_layout: false,
        layout_id: null,
      });
      expect(await app.templates.getVersion('p1', 'welcome', 3)).toEqual({
        template_id: 't1',
        version: 3,
        subject_template: 'Hi {{ name }}',
        html_template: '<p>v3</p>',
        text_template: null,
        variables: { name: 'x' },
        layout_id: null,
        created_at: '2026-01-11T00:00:00.000Z',
        published: true,
      });
      expect(await app.templates.getBySlug('p1', 'welcome')).toMatchObject({ version: 3, html_template: '<p>v3</p>' });
      // The next save is version 4.
      expect(await app.templates.update('p1', 'welcome', { html_template: '<p>v4</p>' })).toMatchObject({
        version: 4,
        published_version: 4,
      });
    } finally {
      await app.close();
    }
  });
});
