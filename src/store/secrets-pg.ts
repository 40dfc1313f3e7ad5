import { randomBytes } from 'node:crypto';
import type { PgCommitter } from './pg-committer.ts';

const SECRET_BYTES = 32;

/**
 * The server's named secrets on PostgreSQL (secrets.ts): made on first use with 32 random
 * bytes, insert-if-missing then read in one transaction, so every node agrees on one value.
 * Kept in memory once read; a failed read is retried next time rather than cached.
 */
export function createPgSecrets(tx: PgCommitter, now: () => string) {
  const kept = new Map<string, Promise<Buffer>>();
  return {
    get(name: string): Promise<Buffer> {
      let secret = kept.get(name);
      if (!secret) {
        secret = tx.write(async (t) => {
          await t.query(
            'INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
            [name, randomBytes(SECRET_BYTES), now()],
          );
          return (await t.query<{ value: Buffer }>('SELECT value FROM server_secrets WHERE name = $1', [name])).rows[0]!
            .value;
        });
        kept.set(name, secret);
        secret.catch(() => kept.delete(name));
      }
      return secret;
    },
  };
}
