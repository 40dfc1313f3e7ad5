-- svc schema, version 6: email_events.id loses its UNIQUE index. Append-only.
-- Event ids are UUIDv7 (unique by construction) and nothing looks an event up by
-- its id: events are read per email, through email_events_email. The index cost
-- one more b-tree insert per event, 13 per delivered three-recipient email.
-- SQLite cannot drop a column constraint, so the table is rebuilt (same columns,
-- same seq values, so the order of events is kept).
CREATE TABLE email_events_v6 (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  email_seq INTEGER NOT NULL REFERENCES emails(seq) ON DELETE CASCADE,
  type TEXT NOT NULL,
  data TEXT NOT NULL DEFAULT '{}',
  ip_address TEXT,
  user_agent TEXT,
  created_at TEXT NOT NULL
);
INSERT INTO email_events_v6 (seq, id, email_seq, type, data, ip_address, user_agent, created_at)
  SELECT seq, id, email_seq, type, data, ip_address, user_agent, created_at FROM email_events;
DROP TABLE email_events;
ALTER TABLE email_events_v6 RENAME TO email_events;
CREATE INDEX email_events_email ON email_events (email_seq, seq);
