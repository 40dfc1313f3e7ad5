// The suppressions store: what the per-project suppression list asks of a database, whichever
// runs. repo.ts (SQLite) and repo-pg.ts (PostgreSQL) implement it; test/contract/suppressions.test.ts
// holds both to it. Addresses reach the store lower-cased (the service lowers them): the store
// compares them as bytes.
import type { Audited } from '../audit/index.ts';
import type { Suppression, SuppressionFilter, SuppressionReason } from './schema.ts';

export interface SuppressionsStore {
  /** The project's entry for exactly that address; undefined when it is not suppressed. */
  find(projectId: string, email: string): Promise<Suppression | undefined>;
  /** The project's entries among these (lower-cased) addresses, in one read; none listed: []. */
  findMany(projectId: string, emails: readonly string[]): Promise<Suppression[]>;
  /**
   * A keyset page of the project's list: at most `limit` entries whose address comes after
   * `after` ('' for the first page; else the last address of the previous page), ordered by
   * address in byte order on both stores, whatever the database's collation. With a filter,
   * only the entries matching it (filterParams in schema.ts says how).
   */
  listPage(projectId: string, after: string, limit: number, filter?: SuppressionFilter): Promise<Suppression[]>;
  /**
   * Adds the entries (created at `at`) and the audit row `a`, in one transaction. An address
   * already listed keeps its created_at and takes the new reason; an address given twice ends
   * with the last reason given. The audit row is written even when `rows` is empty.
   */
  addMany(
    projectId: string,
    rows: { email: string; reason: SuppressionReason }[],
    at: string,
    a: Audited,
  ): Promise<void>;
  /**
   * Deletes the project's entry for the address with its audit row, in one transaction: true;
   * false, and nothing written (no audit row), when the address was not listed.
   */
  remove(projectId: string, email: string, a: Audited): Promise<boolean>;
}
