-- svc schema, version 27: the MTA-STS policies delivery has fetched (issue 32; decisions.md,
-- "MTA-STS in delivery"). Append-only.
--
-- One row per recipient domain, replaced by each successful fetch and read at start, so a
-- restart does not forget an enforce policy: an attacker who blocks the TXT record or the
-- policy host right after a restart cannot downgrade the domain (RFC 8461 section 5.1).
-- `mx` is the policy's mx patterns as a JSON array; times are ISO-8601 UTC.
CREATE TABLE mta_sts_policies (
  domain TEXT PRIMARY KEY,
  policy_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  mx TEXT NOT NULL,
  max_age INTEGER NOT NULL,
  fetched_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
