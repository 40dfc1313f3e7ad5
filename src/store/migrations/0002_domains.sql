-- svc schema, version 2: domain verification (issue 3). Append-only.
-- A domain keeps its latest check and how long its required records have been failing,
-- so one bad lookup never unverifies it (the grace period, docs/decisions.md).

-- JSON array of per-record checks ({type, name, purpose, ok, reason, found}); NULL before the first check.
ALTER TABLE domains ADD COLUMN checks TEXT;
ALTER TABLE domains ADD COLUMN last_checked_at TEXT;
-- First check of the current run of failing checks (DKIM or SPF missing or wrong); NULL when passing.
ALTER TABLE domains ADD COLUMN failing_since TEXT;
-- Consecutive failing checks in that run: at least two are needed to unverify.
ALTER TABLE domains ADD COLUMN failing_checks INTEGER NOT NULL DEFAULT 0;
-- Shown by `svc domains show` while records fail or after the domain became unverified.
ALTER TABLE domains ADD COLUMN warning TEXT;

CREATE INDEX domains_organization ON domains (organization_id, created_at);
CREATE INDEX project_domains_domain ON project_domains (domain_id);
