// The templates store: what stored templates ask of a database, whichever runs. repo.ts (SQLite)
// and repo-pg.ts (PostgreSQL) implement it; test/contract/templates.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { Template } from './schema.ts';

export interface TemplatesStore {
  /** The template of that id, in any project, with its `variables` parsed; undefined when none. */
  findById(id: string): Promise<Template | undefined>;
  /** The project's template of that slug (exactly that slug: slugs are compared as bytes); undefined when none. */
  findBySlug(projectId: string, slug: string): Promise<Template | undefined>;
  /** Every template of the project, ordered by slug in byte order (as SQLite orders text). */
  list(projectId: string): Promise<Template[]>;
  /**
   * Inserts `t` as given (its id, version and times) with its audit row, in one transaction.
   * A slug the project already has rejects with the store's unique violation
   * (store/errors.ts isUniqueViolation), and nothing is written, audit row included.
   */
  create(t: Template, a: Audited): Promise<void>;
  /**
   * Optimistic update: writes name, subject, bodies, variables and updated_at of `t` over the row
   * of that id only while its version is still `t.version`, and raises the version by one; true
   * then, with the audit row in the same transaction. False, and nothing written (no audit row),
   * when the template is gone or someone else updated it first. The slug and project never change.
   */
  update(t: Template, a: Audited): Promise<boolean>;
  /** Deletes the template with its audit row, in one transaction: true; false, nothing written, when none. */
  remove(id: string, a: Audited): Promise<boolean>;
}
