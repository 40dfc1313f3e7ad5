-- svc schema on PostgreSQL, version 17: relayed messages kept as received, as SQLite's 0029
-- (its comment says why).

ALTER TABLE email_bodies ADD COLUMN raw_message bytea;
