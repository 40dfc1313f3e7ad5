import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import type { Template } from './schema.ts';
import type { TemplatesStore } from './store.ts';

type TemplateRow = Omit<Template, 'variables'> & { variables: string };

const toTemplate = (r: TemplateRow | undefined): Template | undefined =>
  r && { ...r, variables: JSON.parse(r.variables) as Record<string, unknown> };

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
             variables, version, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
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
            t.created_at,
            t.updated_at,
          ],
        );
        await audit.record(q, a.actor, a.entry, a.atMs);
      }),
    update: (t: Template, a: Audited) =>
      tx.write(async (q) => {
        const r = await q.query(
          `UPDATE templates SET name = $2, subject_template = $3, html_template = $4, text_template = $5,
             variables = $6, version = version + 1, updated_at = $7
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
          ],
        );
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await audit.record(q, a.actor, a.entry, a.atMs);
        return changed;
      }),
    remove: (id: string, a: Audited) =>
      tx.write(async (q) => {
        const r = await q.query('DELETE FROM templates WHERE id = $1', [id]);
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await audit.record(q, a.actor, a.entry, a.atMs);
        return changed;
      }),
  };
}
