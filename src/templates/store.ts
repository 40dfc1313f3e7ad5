// The templates store: what stored templates ask of a database, whichever runs. repo.ts (SQLite)
// and repo-pg.ts (PostgreSQL) implement it; test/contract/templates.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { Template, TemplateVersion } from './schema.ts';

export interface TemplatesStore {
  /** The template of that id, in any project, with its `variables` parsed; undefined when none. */
  findById(id: string): Promise<Template | undefined>;
  /** The project's template of that slug (exactly that slug: slugs are compared as bytes); undefined when none. */
  findBySlug(projectId: string, slug: string): Promise<Template | undefined>;
  /** Every template of the project, ordered by slug in byte order (as SQLite orders text). */
  list(projectId: string): Promise<Template[]>;
  /**
   * Inserts `t` as given (its id, version and times) with its version row (`t.version`, its
   * content) and its audit row, in one transaction. A slug the project already has rejects with
   * the store's unique violation (store/errors.ts isUniqueViolation), and nothing is written,
   * audit row included.
   */
  create(t: Template, a: Audited): Promise<void>;
  /**
   * Optimistic update: writes name, subject, bodies, variables, layout_id and updated_at of `t`
   * over the row of that id only while its version is still `t.version`, raises the version by
   * one, saves that new version's row (created at `t.updated_at`) and, when `publish`, makes it
   * the published version; true then, with the audit row in the same transaction. False, and
   * nothing written (no audit row), when the template is gone or someone else updated it first.
   * The slug, project and is_layout never change.
   */
  update(t: Template, a: Audited, publish: boolean): Promise<boolean>;
  /**
   * Makes `version` (a version the template has) its published version, with the audit row, in
   * one transaction: true; false, nothing written, when the template or that version is gone.
   */
  publish(id: string, version: number, a: Audited): Promise<boolean>;
  /** One saved version of the template, its `variables` parsed; undefined when none. */
  findVersion(templateId: string, version: number): Promise<TemplateVersion | undefined>;
  /** Every saved version of the template, newest first. */
  listVersions(templateId: string): Promise<TemplateVersion[]>;
  /**
   * Deletes the template with its versions and its audit row, in one transaction, unless it is a
   * layout that a template names (its latest or its published version): 'deleted'; 'missing' or
   * 'in_use', nothing written.
   */
  remove(id: string, a: Audited): Promise<'deleted' | 'missing' | 'in_use'>;
}
