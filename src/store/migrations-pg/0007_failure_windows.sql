-- svc schema on PostgreSQL, version 7: failed logins and failed SMTP AUTH, counted by all nodes.
--
-- Guessing is slowed down per address and per client IP (a window that starts at a key's first
-- failure). One SQLite server counts in its memory; several nodes count here, so a guesser gets
-- the limit once, not once per node behind the load balancer. `key` is namespaced by the
-- counter (`login:ip:203.0.113.9`, `smtp-auth:203.0.113.9`). UNLOGGED, as rate_windows: the
-- counts matter for minutes and need no crash's survival. (PostgreSQL-only, as 0005.)
CREATE UNLOGGED TABLE failure_windows (
  key TEXT PRIMARY KEY,
  window_start BIGINT NOT NULL,
  failures INTEGER NOT NULL
);
CREATE INDEX failure_windows_start ON failure_windows (window_start);
