-- svc schema, version 4: click and open tracking (issue 3). Append-only.
-- Secrets the server makes for itself on first use and keeps (the tracking token key:
-- 32 random bytes). Losing one breaks every link signed with it, so it is never rotated silently.
CREATE TABLE server_secrets (
  name TEXT PRIMARY KEY,
  value BLOB NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
