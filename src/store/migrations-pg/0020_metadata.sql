-- svc schema on PostgreSQL, version 20: metadata of a send, as SQLite's 0032 (its comment says why).
ALTER TABLE emails ADD COLUMN metadata TEXT;
