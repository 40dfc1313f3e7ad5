-- svc schema, version 18: an email's HTML and text bodies move to their own table (issue 16).
-- Append-only.
--
-- Body retention empties the bodies of old emails. In the emails row, that left each page of
-- old rows mostly empty but never free: rows are only ever added at the end of the table, so
-- SQLite never reused the space, and the file kept the bodies' size until the emails
-- themselves were deleted (bench:growth, docs/performance.md "Database growth"). In a table of
-- their own, keyed by the email's seq, the bodies of old emails are deleted in key order: whole
-- pages become free, and new bodies reuse them.
CREATE TABLE email_bodies (
  email_seq INTEGER PRIMARY KEY REFERENCES emails(seq) ON DELETE CASCADE,
  html_body TEXT,
  text_body TEXT
);
INSERT INTO email_bodies (email_seq, html_body, text_body)
  SELECT seq, html_body, text_body FROM emails WHERE html_body IS NOT NULL OR text_body IS NOT NULL;
ALTER TABLE emails DROP COLUMN html_body;
ALTER TABLE emails DROP COLUMN text_body;

-- Deleting an email (email retention) deletes its tags through ON DELETE CASCADE, which looks
-- them up by email_seq: without this index each deleted email scanned every tag of the server.
CREATE INDEX email_tags_email ON email_tags (email_seq);
