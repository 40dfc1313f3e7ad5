-- svc schema, version 35: the queue's index in two, rows ready and rows leased (issue 36).
--
-- recipients_due held every recipient with a due time, leased ones included: a leased row keeps
-- its past due time while it is tried, so each look for due rows walked past every row in
-- flight (139 a call on average in bench:nodes, 0.87 ms a call on PostgreSQL). Now:
-- - recipients_ready: due time set and not leased, in the order delivery takes them;
-- - recipients_leased: leased, by lease end, so expired leases are found without a walk.
-- The queue is their union (delivery/repo.ts, QUEUED_RECIPIENTS). A claim's update wrote a
-- recipients_due entry before; it writes a recipients_leased one now.
DROP INDEX recipients_due;
CREATE INDEX recipients_ready ON recipients (next_attempt_at, email_seq) WHERE next_attempt_at IS NOT NULL AND lease_until IS NULL;
CREATE INDEX recipients_leased ON recipients (lease_until) WHERE lease_until IS NOT NULL;
