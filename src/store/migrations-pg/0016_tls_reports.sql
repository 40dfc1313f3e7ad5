-- svc schema (PostgreSQL), version 16: TLS reporting (RFC 8460; issue 32, item 3; decisions.md, "TLS
-- reporting"), as SQLite's 0028. Append-only.
--
-- tls_report_counts: per UTC day and policy domain, the MX hosts tried against their TLS
-- policy, counted by what RFC 8460's report groups by (policy, MX host, addresses, result and
-- the failure's words). Text keys are '' when absent, so the primary key holds them.
-- `policy_string` is the policy's lines as a JSON array. Counts are added by each flush.
CREATE TABLE tls_report_counts (
  day TEXT NOT NULL,
  policy_domain TEXT NOT NULL,
  policy_type TEXT NOT NULL,
  policy_string TEXT NOT NULL,
  mx_host TEXT NOT NULL,
  receiving_ip TEXT NOT NULL,
  sending_ip TEXT NOT NULL,
  result TEXT NOT NULL,
  failure_reason TEXT NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (day, policy_domain, policy_type, policy_string, mx_host, receiving_ip, sending_ip, result, failure_reason)
);

-- tls_reports: one row per (day, policy domain) once a node has claimed its report: the
-- report's id, where it went and how each destination answered (`destinations`, a JSON array
-- of {uri, outcome, detail}), and when it may be tried again. status: sending (claimed, under
-- `lease_until`), retry (waits for `next_attempt_at`), sent, failed (gave up), skipped (no
-- usable _smtp._tls record).
CREATE TABLE tls_reports (
  day TEXT NOT NULL,
  policy_domain TEXT NOT NULL,
  report_id TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  lease_until TEXT,
  next_attempt_at TEXT,
  destinations TEXT NOT NULL,
  detail TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (day, policy_domain)
);
