-- svc schema, version 17: the running servers ("nodes") and what only they know (issue 16).
-- Append-only.
--
-- Each `svc serve` keeps its row fresh (seen_at) while it runs and removes it at a clean stop,
-- so `svc top` on the data dir, a read-only reader in another process, can show the SMTP relay
-- sessions the server holds in memory. With several nodes over one database (issue 17) there is
-- one row per node; a row not seen for a while belongs to a node that died.
CREATE TABLE nodes (
  id TEXT PRIMARY KEY,
  hostname TEXT NOT NULL,
  pid INTEGER NOT NULL,
  version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  seen_at TEXT NOT NULL,
  relay_sessions INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
