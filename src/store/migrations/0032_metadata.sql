-- svc schema, version 32: metadata of a send (issue 35, item 4; decisions.md, "Metadata"). Append-only.
--
-- emails.metadata: the send's key/value pairs as JSON text (at most 20 keys, 4 KB), NULL without.
-- Returned with the email, carried in each of its webhooks, and a list filter (`key:value`),
-- which scans the project's emails the other filters leave, as a subject filter does.
ALTER TABLE emails ADD COLUMN metadata TEXT;
