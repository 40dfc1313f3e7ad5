-- svc schema on PostgreSQL, version 2: each claim of a recipient names itself (SQLite's 0019).
--
-- lease_until says until when a claim holds a recipient; lease_token says which claim it is.
-- A node whose lease ran out must not record its outcome over the claim of the node that took
-- the recipient after it: its writes name the token, and find no row once it was replaced.
ALTER TABLE recipients ADD COLUMN lease_token TEXT;
