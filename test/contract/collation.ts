// Text order on PostgreSQL follows the column's collation; SQLite's is bytes. The test server
// runs --locale=C, where both agree by chance: a contract test that promises byte order gives
// the column, on PostgreSQL, a collation that does not sort by bytes ("und-x-icu": letters
// before case, punctuation first), as a production database in en_US would. A store that
// forgets `COLLATE "C"` then answers in another order, and fails.
import type { OpenedStore, StoreKind } from './stores.ts';

/** On PostgreSQL, `table.column` takes a collation that does not sort by bytes; SQLite is left as is. */
export async function collateNotByBytes(s: OpenedStore, kind: StoreKind, table: string, column: string) {
  if (kind === 'postgres') await s.exec(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE text COLLATE "und-x-icu"`);
}
