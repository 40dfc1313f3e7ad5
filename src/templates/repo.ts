import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type { Template } from './schema.ts';
import type { TemplatesStore } from './store.ts';

type TemplateRow = Omit<Template, 'variables'> & { variables: string };

const toTemplate = (r: TemplateRow | undefined): Template | undefined =>
  r && { ...r, variables: JSON.parse(r.variables) as Record<string, unknown> };

/** The templates store on SQLite (store.ts); every write commits with its audit row. */
export function createTemplatesRepo(db: Db, tx: Committer, audit: AuditWriter): TemplatesStore {
  const byId = db.prepare<[string], TemplateRow>('SELECT * FROM templates WHERE id = ?');
  const bySlug = db.prepare<[string, string], TemplateRow>('SELECT * FROM templates WHERE project_id = ? AND slug = ?');
  const ofProject = db.prepare<[string], TemplateRow>('SELECT * FROM templates WHERE project_id = ? ORDER BY slug');
  const insert = db.prepare(
    `INSERT INTO templates (id, project_id, name, slug, subject_template, html_template, text_template, variables,
       version, created_at, updated_at)
     VALUES (@id, @project_id, @name, @slug, @subject_template, @html_template, @text_template, @variables,
       @version, @created_at, @updated_at)`,
  );
  const update = db.prepare(
    `UPDATE templates SET name = @name, subject_template = @subject_template, html_template = @html_template,
       text_template = @text_template, variables = @variables, version = version + 1, updated_at = @updated_at
     WHERE id = @id AND version = @version`,
  );
  const del = db.prepare('DELETE FROM templates WHERE id = ?');
  const row = (t: Template) => ({ ...t, variables: JSON.stringify(t.variables) });
  return {
    findById: (id: string) => Promise.resolve(toTemplate(byId.get(id))),
    findBySlug: (projectId: string, slug: string) => Promise.resolve(toTemplate(bySlug.get(projectId, slug))),
    list: (projectId: string) => Promise.resolve(ofProject.all(projectId).map((r) => toTemplate(r)!)),
    create: (t: Template, a: Audited) =>
      tx.write(() => {
        insert.run(row(t));
        audit.record(a.actor, a.entry, a.atMs);
      }),
    update: (t: Template, a: Audited) =>
      tx.write(() => {
        const changed = update.run(row(t)).changes > 0;
        if (changed) audit.record(a.actor, a.entry, a.atMs);
        return changed;
      }),
    remove: (id: string, a: Audited) =>
      tx.write(() => {
        const changed = del.run(id).changes > 0;
        if (changed) audit.record(a.actor, a.entry, a.atMs);
        return changed;
      }),
  };
}
