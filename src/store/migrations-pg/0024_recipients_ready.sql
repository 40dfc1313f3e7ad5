-- svc schema on PostgreSQL, version 24: the queue's index in two, rows ready and rows leased, as
-- SQLite's 0035 (its comment says why).
DROP INDEX recipients_due;
CREATE INDEX recipients_ready ON recipients (next_attempt_at, email_seq) WHERE next_attempt_at IS NOT NULL AND lease_until IS NULL;
CREATE INDEX recipients_leased ON recipients (lease_until) WHERE lease_until IS NOT NULL;
