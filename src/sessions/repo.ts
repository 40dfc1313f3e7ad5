import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { REUSED, rotationOf } from './rotation.ts';
import type { NewToken, RotateResult, SessionsStore, TokenWithFamily } from './store.ts';

export type { NewToken, RotateResult, TokenKind, TokenRow, TokenWithFamily } from './store.ts';

/** The sessions store on SQLite (store.ts): families and their tokens. */
export function createSessionsRepo(db: Db, tx: Committer): SessionsStore {
  const q = {
    token: db.prepare<[string], TokenWithFamily>(
      `SELECT t.*, f.user_id, f.revoked_at AS family_revoked_at
       FROM session_tokens t JOIN session_families f ON f.id = t.family_id WHERE t.token_hash = +?`,
    ),
  };
  const w = {
    family: db.prepare('INSERT INTO session_families (id, user_id, created_at) VALUES (?, ?, ?)'),
    token: db.prepare(
      `INSERT INTO session_tokens (token_hash, family_id, kind, created_at, expires_at)
       VALUES (@token_hash, @family_id, @kind, @created_at, @expires_at)`,
    ),
    use: db.prepare('UPDATE session_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL'),
    revoke: db.prepare(
      'UPDATE session_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL',
    ),
    purge: db.prepare('DELETE FROM session_tokens WHERE expires_at < ?'),
    purgeFamilies: db.prepare(
      'DELETE FROM session_families WHERE NOT EXISTS (SELECT 1 FROM session_tokens t WHERE t.family_id = session_families.id)',
    ),
  };
  const insert = (familyId: string, at: string, tokens: NewToken[]) => {
    for (const t of tokens) w.token.run({ ...t, family_id: familyId, created_at: at });
  };
  return {
    findToken: (hash: string) => Promise.resolve(q.token.get(hash)),

    startFamily: (familyId: string, userId: string, at: string, tokens: NewToken[]) =>
      tx.write(() => {
        w.family.run(familyId, userId, at);
        insert(familyId, at, tokens);
      }),

    rotate: (hash: string, at: string, next: NewToken[]) =>
      tx.write((): RotateResult => {
        const r = rotationOf(q.token.get(hash), at);
        if (r.write === 'revoke') w.revoke.run(at, REUSED, r.familyId);
        if (r.write === 'rotate') {
          w.use.run(at, hash);
          insert(r.familyId, at, next);
        }
        return r.result;
      }),

    revokeFamily: (familyId: string, at: string, reason: string) =>
      tx.write(() => void w.revoke.run(at, reason, familyId)),

    purgeExpired: (at: string) =>
      tx.write(() => {
        w.purge.run(at);
        w.purgeFamilies.run();
      }),
  };
}
