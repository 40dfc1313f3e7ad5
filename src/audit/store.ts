// The audit store: what reading the audit log asks of a database, whichever runs. repo.ts
// (SQLite) and repo-pg.ts (PostgreSQL) implement it; test/contract/audit.test.ts holds both to it.
//
// The log's writer is not part of this interface: it runs inside the transaction of the write it
// records (createAuditWriter on SQLite, synchronous; createPgAuditWriter on PostgreSQL, given the
// transaction's handle), so its two dialects take different arguments and share no interface.
// Its contract (the audit row commits with the change or not at all, and none is written when
// the change is refused) is held by the contract tests of the stores that call it (accounts,
// domains, emails, keys, suppressions, templates, webhooks), which read the rows they wrote; the
// rows' shape (the actor named, the organization found from the project) by
// test/contract/audit.test.ts, through a store that writes one.
import type { AuditLog } from './schema.ts';

export interface AuditStore {
  /**
   * A page of the organization's log, newest first in the order the rows were written (not by
   * id: ids minted in the same millisecond do not sort by time): at most `limit` rows written
   * before the row `before`; from the newest when `before` is undefined or names no row.
   */
  list(orgId: string, before: string | undefined, limit: number): Promise<AuditLog[]>;
  /**
   * Every row of the organization's log, in list's order, read `pageSize` rows (500 by
   * default) at a time (for the CSV export); a row written once it has begun is not in it.
   */
  iterate(orgId: string, pageSize?: number): AsyncGenerator<AuditLog>;
}
