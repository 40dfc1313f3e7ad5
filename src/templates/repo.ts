import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type { Template } from './schema.ts';
import type { TemplatesStore } from './store.ts';
import { LAYOUT_IN_USE_SQL, toTemplate, toVersion, type TemplateRow, type VersionRow } from './rows.ts';

/** The templates store on SQLite (store.ts); every write commits with its audit row. */
export function createTemplatesRepo(db: Db, tx: Committer, audit: AuditWriter): TemplatesStore {
  const byId = db.prepare<[string], TemplateRow>('SELECT * FROM templates WHERE id = ?');
  const bySlug = db.prepare<[string, string], TemplateRow>('SELECT * FROM templates WHERE project_id = ? AND slug = ?');
  const ofProject = db.prepare<[string], TemplateRow>('SELECT * FROM templates WHERE project_id = +? ORDER BY slug');
  const insert = db.prepare(
    `INSERT INTO templates (id, project_id, name, slug, subject_template, html_template, text_template, variables,
       version, published_version, is_layout, layout_id, created_at, updated_at)
     VALUES (@id, @project_id, @name, @slug, @subject_template, @html_template, @text_template, @variables,
       @version, @published_version, @is_layout, @layout_id, @created_at, @updated_at)`,
  );
  const insertVersion = db.prepare(
    `INSERT INTO template_versions (template_id, version, subject_template, html_template, text_template, variables,
       layout_id, created_at)
     VALUES (@id, @version, @subject_template, @html_template, @text_template, @variables, @layout_id, @updated_at)`,
  );
  const update = db.prepare(
    `UPDATE templates SET name = @name, subject_template = @subject_template, html_template = @html_template,
       text_template = @text_template, variables = @variables, layout_id = @layout_id, version = version + 1,
       published_version = CASE WHEN @publish = 1 THEN version + 1 ELSE published_version END,
       updated_at = @updated_at
     WHERE id = @id AND version = @version`,
  );
  const publish = db.prepare(
    `UPDATE templates SET published_version = @version
     WHERE id = @id AND EXISTS (SELECT 1 FROM template_versions WHERE template_id = @id AND version = @version)`,
  );
  const version = db.prepare<[string, number], VersionRow>(
    'SELECT * FROM template_versions WHERE template_id = ? AND version = ?',
  );
  const versions = db.prepare<[string], VersionRow>(
    'SELECT * FROM template_versions WHERE template_id = +? ORDER BY version DESC',
  );
  const inUse = db.prepare<{ id: string }, { one: number }>(LAYOUT_IN_USE_SQL.replaceAll('$1', '@id'));
  const del = db.prepare('DELETE FROM templates WHERE id = ?');
  const row = (t: Template) => ({ ...t, variables: JSON.stringify(t.variables), is_layout: t.is_layout ? 1 : 0 });
  return {
    findById: (id: string) => Promise.resolve(toTemplate(byId.get(id))),
    findBySlug: (projectId: string, slug: string) => Promise.resolve(toTemplate(bySlug.get(projectId, slug))),
    list: (projectId: string) => Promise.resolve(ofProject.all(projectId).map((r) => toTemplate(r)!)),
    create: (t: Template, a: Audited) =>
      tx.write(() => {
        insert.run(row(t));
        insertVersion.run(row(t));
        audit.record(a.actor, a.entry, a.atMs);
      }),
    update: (t: Template, a: Audited, publishIt: boolean) =>
      tx.write(() => {
        const changed = update.run({ ...row(t), publish: publishIt ? 1 : 0 }).changes > 0;
        if (!changed) return false;
        insertVersion.run({ ...row(t), version: t.version + 1 });
        audit.record(a.actor, a.entry, a.atMs);
        return true;
      }),
    publish: (id: string, v: number, a: Audited) =>
      tx.write(() => {
        const changed = publish.run({ id, version: v }).changes > 0;
        if (changed) audit.record(a.actor, a.entry, a.atMs);
        return changed;
      }),
    findVersion: (templateId: string, v: number) => Promise.resolve(toVersion(version.get(templateId, v))),
    listVersions: (templateId: string) => Promise.resolve(versions.all(templateId).map((r) => toVersion(r)!)),
    remove: (id: string, a: Audited) =>
      tx.write(() => {
        if (inUse.get({ id })) return 'in_use' as const;
        if (del.run(id).changes === 0) return 'missing' as const;
        audit.record(a.actor, a.entry, a.atMs);
        return 'deleted' as const;
      }),
  };
}
