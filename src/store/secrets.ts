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
  return keptSecrets((name, value) =>
    tx.write(() => {
      add.run(name, value, now());
      return read.get(name)!.value;
    }),
  );
}

/**
 * Secrets kept in memory once read, for both stores: `make(name, value)` stores `value` (32
 * random bytes) unless the secret exists, and returns the stored one. A failed make is retried
 * next time rather than cached.
 */
export function keptSecrets(make: (name: string, value: Buffer) => Promise<Buffer>) {
  const kept = new Map<string, Promise<Buffer>>();
  return {
    get(name: string): Promise<Buffer> {
      let secret = kept.get(name);
      if (!secret) {
        secret = make(name, randomBytes(SECRET_BYTES));
        kept.set(name, secret);
        secret.catch(() => kept.delete(name));
      }
      return secret;
    },
  };
}

export type Secrets = ReturnType<typeof createSecrets>;
