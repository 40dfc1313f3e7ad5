import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import type { Template } from './schema.ts';
import type { TemplatesStore } from './store.ts';
import { LAYOUT_IN_USE_SQL, toTemplate, toVersion, type TemplateRow, type VersionRow } from './rows.ts';

type Query = Pick<PgTx, 'query'>;

/** Saves `t`'s content as its version `version`, created at `t.updated_at`. */
async function insertVersion(q: Query, t: Template, version: number): Promise<void> {
  await q.query(
    `INSERT INTO template_versions (template_id, version, subject_template, html_template, text_template,
       variables, layout_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      t.id,
      version,
      t.subject_template,
      t.html_template,
      t.text_template,
      JSON.stringify(t.variables),
      t.layout_id,
      t.updated_at,
    ],
  );
}

/** The templates store on PostgreSQL (store.ts); every write commits with its audit row. */
export function createPgTemplatesRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): TemplatesStore {
  return {
    findById: async (id: string) =>
      toTemplate((await pool.query<TemplateRow>('SELECT * FROM templates WHERE id = $1', [id])).rows[0]),
    findBySlug: async (projectId: string, slug: string) =>
      toTemplate(
        (
          await pool.query<TemplateRow>('SELECT * FROM templates WHERE project_id = $1 AND slug = $2', [
            projectId,
            slug,
          ])
        ).rows[0],
      ),
    list: async (projectId: string) =>
      (
        await pool.query<TemplateRow>('SELECT * FROM templates WHERE project_id = $1 ORDER BY slug COLLATE "C"', [
          projectId,
        ])
      ).rows.map((r) => toTemplate(r)!),
    create: (t: Template, a: Audited) =>
      tx.write(async (q) => {
        await q.query(
          `INSERT INTO templates (id, project_id, name, slug, subject_template, html_template, text_template,
             variables, version, published_version, is_layout, layout_id, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
          [
            t.id,
            t.project_id,
            t.name,
            t.slug,
            t.subject_template,
            t.html_template,
            t.text_template,
            JSON.stringify(t.variables),
            t.version,
            t.published_version,
            t.is_layout ? 1 : 0,
            t.layout_id,
            t.created_at,
            t.updated_at,
          ],
        );
        await insertVersion(q, t, t.version);
        await audit.record(q, a.actor, a.entry, a.atMs);
      }),
    update: (t: Template, a: Audited, publish: boolean) =>
      tx.write(async (q) => {
        const r = await q.query(
          `UPDATE templates SET name = $2, subject_template = $3, html_template = $4, text_template = $5,
             variables = $6, layout_id = $9, version = version + 1,
             published_version = CASE WHEN $10 THEN version + 1 ELSE published_version END, updated_at = $7
           WHERE id = $1 AND version = $8`,
          [
            t.id,
            t.name,
            t.subject_template,
            t.html_template,
            t.text_template,
            JSON.stringify(t.variables),
            t.updated_at,
            t.version,
            t.layout_id,
            publish,
          ],
        );
        if ((r.rowCount ?? 0) === 0) return false;
        await insertVersion(q, t, t.version + 1);
        await audit.record(q, a.actor, a.entry, a.atMs);
        return true;
      }),
    publish: (id: string, version: number, a: Audited) =>
      tx.write(async (q) => {
        const r = await q.query(
          `UPDATE templates SET published_version = $2
           WHERE id = $1 AND EXISTS (SELECT 1 FROM template_versions WHERE template_id = $1 AND version = $2)`,
          [id, version],
        );
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await audit.record(q, a.actor, a.entry, a.atMs);
        return changed;
      }),
    findVersion: async (templateId: string, version: number) =>
      toVersion(
        (
          await pool.query<VersionRow>('SELECT * FROM template_versions WHERE template_id = $1 AND version = $2', [
            templateId,
            version,
          ])
        ).rows[0],
      ),
    listVersions: async (templateId: string) =>
      (
        await pool.query<VersionRow>('SELECT * FROM template_versions WHERE template_id = $1 ORDER BY version DESC', [
          templateId,
        ])
      ).rows.map((r) => toVersion(r)!),
    remove: (id: string, a: Audited) =>
      tx.write(async (q) => {
        if ((await q.query(LAYOUT_IN_USE_SQL, [id])).rows.length > 0) return 'in_use' as const;
        const r = await q.query('DELETE FROM templates WHERE id = $1', [id]);
        if ((r.rowCount ?? 0) === 0) return 'missing' as const;
        await audit.record(q, a.actor, a.entry, a.atMs);
        return 'deleted' as const;
      }),
  };
}
