-- svc schema, version 8: the audit log (issue 11). Append-only.
-- One row per management write, from the HTTP API or the CLI, written in the same
-- transaction as the write: who (a user with their client IP, or the CLI with the OS
-- user), what (action and target), and the resource before and after, as JSON.
CREATE TABLE audit_logs (
  id TEXT PRIMARY KEY,
  -- No foreign key: the log outlives what it records, the organization's deletion included.
  organization_id TEXT NOT NULL,
  project_id TEXT,
  actor_type TEXT NOT NULL CHECK (actor_type IN ('user', 'cli')),
  actor_id TEXT,
  actor_name TEXT,
  ip TEXT,
  action TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id TEXT NOT NULL,
  before TEXT,
  after TEXT,
  created_at TEXT NOT NULL
);
-- Newest first is rowid order (insertion), which ids minted in the same millisecond are not;
-- the index holds the rowid, so a page of one organization reads it in order.
CREATE INDEX audit_logs_org ON audit_logs (organization_id);
