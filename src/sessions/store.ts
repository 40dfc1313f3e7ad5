// The sessions store: what management sessions ask of a database, whichever runs. repo.ts
// (SQLite) and repo-pg.ts (PostgreSQL) implement it; test/contract/sessions.test.ts holds both
// to it. Tokens are stored only as SHA-256 hashes; times are ISO 8601 text, compared as text.

export type TokenKind = 'access' | 'refresh';

export interface TokenRow {
  token_hash: string;
  family_id: string;
  kind: TokenKind;
  created_at: string;
  expires_at: string;
  /** When a refresh token was rotated away; presenting it again is reuse. */
  used_at: string | null;
}

/** A token with its family, as authentication reads it. */
export interface TokenWithFamily extends TokenRow {
  user_id: string;
  family_revoked_at: string | null;
}

export interface NewToken {
  token_hash: string;
  kind: TokenKind;
  expires_at: string;
}

/** The result of presenting a refresh token, decided and applied in one transaction. */
export type RotateResult =
  | { ok: true; user_id: string; family_id: string }
  | { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'reused' };

export interface SessionsStore {
  /** The token with its family's user and revocation, whatever its kind or state; undefined when none. */
  findToken(hash: string): Promise<TokenWithFamily | undefined>;
  /** A new family for `userId` (login) with its first tokens, all created at `at`, in one transaction. */
  startFamily(familyId: string, userId: string, at: string, tokens: NewToken[]): Promise<void>;
  /**
   * Presents a refresh token, read and written in one transaction (on PostgreSQL the token is
   * locked meanwhile, so two nodes given it at once take turns: the second sees it used). The
   * checks, in order: no such refresh token (absent, or an access token): `unknown`; its
   * family revoked: `revoked`; the token used already (a copy was stolen, or is replayed): the
   * whole family is revoked at `at` ('refresh token reused'), `reused`; past its expires_at
   * (`expires_at <= at`): `expired`. Only `reused` writes. Else the token is marked used at
   * `at` and `next` joins its family, created at `at`: ok, with the family's user and id.
   * (rotation.ts decides, for both stores.)
   */
  rotate(hash: string, at: string, next: NewToken[]): Promise<RotateResult>;
  /**
   * Revokes the family (its tokens stop working) at `at` for `reason`. A family revoked already
   * keeps its first time and reason; an unknown one is no error; nothing is written then.
   */
  revokeFamily(familyId: string, at: string, reason: string): Promise<void>;
  /**
   * Deletes the tokens whose expires_at is before `at`, then the families left with no token
   * (whatever their state), in one transaction.
   */
  purgeExpired(at: string): Promise<void>;
}
