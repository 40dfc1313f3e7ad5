-- svc schema (PostgreSQL), version 15: the MTA-STS policies delivery has fetched (issue 32;
-- decisions.md, "MTA-STS in delivery"), as SQLite's 0027. Append-only.
CREATE TABLE mta_sts_policies (
  domain TEXT PRIMARY KEY,
  policy_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  mx TEXT NOT NULL,
  max_age INTEGER NOT NULL,
  fetched_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
