-- svc schema, version 19: each claim of a recipient names itself (issue 17). Append-only.
--
-- lease_until says until when a claim holds a recipient; lease_token says which claim it is.
-- With several nodes on PostgreSQL, a node whose lease ran out (a long SMTP session, a pause)
-- must not record its outcome over the claim of the node that took the recipient after it:
-- its writes name the token, and find no row once another claim has replaced it.
ALTER TABLE recipients ADD COLUMN lease_token TEXT;
