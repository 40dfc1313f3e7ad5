import type { PgPool } from '../store/pg.ts';
import type { PgTx } from '../store/pg-committer.ts';
import type { StoredResponse } from './repo.ts';

/**
 * Idempotency-Key records on PostgreSQL, held across nodes: the SQLite store keeps keys in
 * flight in its one process's memory, which another node cannot see. Here a send takes its key
 * with a row inside its own transaction, first thing: a send with the same key on any node
 * waits on that row until the first send commits (or rolls back), then finds its response and
 * replays it. So two nodes given one key make one email.
 */
export function createPgIdempotency(pool: PgPool) {
  return {
    /** The committed record of a key, if live (checked before doing any work). */
    find: async (projectId: string, key: string, nowIso: string): Promise<StoredResponse | undefined> =>
      (
        await pool.query<StoredResponse>(
          'SELECT request_hash, response FROM idempotency_keys WHERE project_id = $1 AND key = $2 AND expires_at > $3',
          [projectId, key, nowIso],
        )
      ).rows[0],
    /**
     * Inside the send's transaction: takes the key for this send (null), or returns the record
     * of the send that has it. An expired record is taken over.
     */
    async claim(
      t: PgTx,
      projectId: string,
      key: string,
      hash: string,
      nowIso: string,
      expiresIso: string,
    ): Promise<StoredResponse | null> {
      const took = await t.query(
        `INSERT INTO idempotency_keys (project_id, key, request_hash, response, email_id, created_at, expires_at)
         VALUES ($1, $2, $3, '', NULL, $4, $5)
         ON CONFLICT (project_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = '',
           email_id = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE idempotency_keys.expires_at <= excluded.created_at`,
        [projectId, key, hash, nowIso, expiresIso],
      );
      if ((took.rowCount ?? 0) > 0) return null;
      const prior = await t.query<StoredResponse>(
        'SELECT request_hash, response FROM idempotency_keys WHERE project_id = $1 AND key = $2',
        [projectId, key],
      );
      return prior.rows[0]!;
    },
    /** The response of the send that took the key, in the same transaction. */
    save: async (t: PgTx, projectId: string, key: string, response: unknown, emailId: string): Promise<void> => {
      await t.query('UPDATE idempotency_keys SET response = $3, email_id = $4 WHERE project_id = $1 AND key = $2', [
        projectId,
        key,
        JSON.stringify(response),
        emailId,
      ]);
    },
    purgeExpired: async (nowIso: string): Promise<number> =>
      (await pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [nowIso])).rowCount ?? 0,
  };
}

export type PgIdempotency = ReturnType<typeof createPgIdempotency>;
