import { randomBytes } from 'node:crypto';
import type { Committer } from './committer.ts';
import type { Db } from './db.ts';

const SECRET_BYTES = 32;

/**
 * The server's named secrets (`server_secrets`): the key of tracking tokens, of return
 * paths. A secret is made on first use with 32 random bytes; INSERT OR IGNORE then
 * SELECT in one transaction, so a CLI and a server on the same file agree on one value.
 * Kept in memory once read; a failed read is retried next time rather than cached.
 */
export function createSecrets(db: Db, tx: Committer, now: () => string) {
  const add = db.prepare('INSERT OR IGNORE INTO server_secrets (name, value, created_at) VALUES (?, ?, ?)');
  const read = db.prepare<[string], { value: Buffer }>('SELECT value FROM server_secrets WHERE name = ?');
  const kept = new Map<string, Promise<Buffer>>();
  return {
    get(name: string): Promise<Buffer> {
      let secret = kept.get(name);
      if (!secret) {
        secret = tx.write(() => {
          add.run(name, randomBytes(SECRET_BYTES), now());
          return read.get(name)!.value;
        });
        kept.set(name, secret);
        secret.catch(() => kept.delete(name));
      }
      return secret;
    },
  };
}

export type Secrets = ReturnType<typeof createSecrets>;
