-- svc schema on PostgreSQL, version 5: per-key request counts shared by the nodes.
--
-- The per-key rate (requests a second) is a fixed one-second window. One SQLite server counts
-- in its memory; several nodes count here, so a key gets its rate once, not once per node.
-- UNLOGGED: the counts matter for a second, are rewritten on every request, and need no WAL
-- nor a crash's survival. (PostgreSQL-only: test/postgres-schema.test.ts names it.)
CREATE UNLOGGED TABLE rate_windows (
  key TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (key, window_start)
);
