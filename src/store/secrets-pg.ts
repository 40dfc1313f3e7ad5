import type { PgCommitter } from './pg-committer.ts';
import { keptSecrets } from './secrets.ts';

/**
 * The server's named secrets on PostgreSQL (secrets.ts): made on first use, insert-if-missing
 * then read in one transaction, so every node agrees on one value.
 */
export function createPgSecrets(tx: PgCommitter, now: () => string) {
  return keptSecrets((name, value) =>
    tx.write(async (t) => {
      await t.query(
        'INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
        [name, value, now()],
      );
      return (await t.query<{ value: Buffer }>('SELECT value FROM server_secrets WHERE name = $1', [name])).rows[0]!
        .value;
    }),
  );
}
