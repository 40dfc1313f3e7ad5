import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import { REUSED, rotationOf } from './rotation.ts';
import type { NewToken, RotateResult, SessionsStore, TokenWithFamily } from './store.ts';

const TOKEN = `SELECT t.*, f.user_id, f.revoked_at AS family_revoked_at
               FROM session_tokens t JOIN session_families f ON f.id = t.family_id WHERE t.token_hash = $1`;

/**
 * The sessions store on PostgreSQL (store.ts). A refresh token is locked while it is presented,
 * so two nodes given the same token at once take turns: the second sees it used, and the family
 * is revoked as a reuse, as on one server.
 */
export function createPgSessionsRepo(pool: PgPool, tx: PgCommitter): SessionsStore {
  const insert = async (t: PgTx, familyId: string, at: string, tokens: NewToken[]) => {
    for (const k of tokens) {
      await t.query(
        'INSERT INTO session_tokens (token_hash, family_id, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [k.token_hash, familyId, k.kind, at, k.expires_at],
      );
    }
  };
  const revoke = (t: PgTx, at: string, reason: string, familyId: string) =>
    t.query('UPDATE session_families SET revoked_at = $1, revoked_reason = $2 WHERE id = $3 AND revoked_at IS NULL', [
      at,
      reason,
      familyId,
    ]);
  return {
    findToken: async (hash: string) => (await pool.query<TokenWithFamily>(TOKEN, [hash])).rows[0],

    startFamily: (familyId: string, userId: string, at: string, tokens: NewToken[]) =>
      tx.write(async (t) => {
        await t.query('INSERT INTO session_families (id, user_id, created_at) VALUES ($1, $2, $3)', [
          familyId,
          userId,
          at,
        ]);
        await insert(t, familyId, at, tokens);
      }),

    rotate: (hash: string, at: string, next: NewToken[]) =>
      tx.write(async (t): Promise<RotateResult> => {
        const r = rotationOf((await t.query<TokenWithFamily>(`${TOKEN} FOR UPDATE OF t`, [hash])).rows[0], at);
        if (r.write === 'revoke') await revoke(t, at, REUSED, r.familyId);
        if (r.write === 'rotate') {
          await t.query('UPDATE session_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL', [at, hash]);
          await insert(t, r.familyId, at, next);
        }
        return r.result;
      }),

    revokeFamily: (familyId: string, at: string, reason: string) =>
      tx.write(async (t) => {
        await revoke(t, at, reason, familyId);
      }),

    purgeExpired: (at: string) =>
      tx.write(async (t) => {
        await t.query('DELETE FROM session_tokens WHERE expires_at < $1', [at]);
        await t.query(
          `DELETE FROM session_families f WHERE NOT EXISTS (SELECT 1 FROM session_tokens t WHERE t.family_id = f.id)`,
        );
      }),
  };
}
