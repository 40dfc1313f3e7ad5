-- svc schema, version 29: relayed messages kept as received (issue 33). Append-only.
--
-- A message that came through the SMTP relay or POST /v1/emails/raw is stored as its client
-- wrote it (after DATA's dot-unstuffing, line ends made CRLF) and delivered as such, with only
-- svc's DKIM signature and the Message-ID, Date and List-Unsubscribe fields it must add. Its
-- text, HTML and attachments are read from these bytes when asked for (src/emails/raw-view.ts),
-- so such an email has no html_body, text_body or attachment rows. Body retention drops the
-- row of email_bodies, and the message with it.

ALTER TABLE email_bodies ADD COLUMN raw_message BLOB;
