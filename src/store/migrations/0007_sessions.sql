-- svc schema, version 7: Management API sessions (decisions.md, "Keys, sessions, roles"). Append-only.
-- A login starts a family: one refresh token at a time (each use rotates it) and the access
-- tokens issued with it. Tokens are stored only as SHA-256, like API keys. Reusing a rotated
-- refresh token, or logging out, revokes the family and with it every token of it.
CREATE TABLE session_families (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  revoked_reason TEXT
);
CREATE INDEX session_families_user ON session_families (user_id);

CREATE TABLE session_tokens (
  token_hash TEXT PRIMARY KEY,
  family_id TEXT NOT NULL REFERENCES session_families(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  -- A refresh token that was rotated away; presenting it again is reuse.
  used_at TEXT
) WITHOUT ROWID;
CREATE INDEX session_tokens_family ON session_tokens (family_id);
CREATE INDEX session_tokens_expiry ON session_tokens (expires_at);
