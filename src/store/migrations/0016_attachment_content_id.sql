-- svc schema, version 16: an attachment may carry a Content-ID (issue 14). Append-only.
--
-- A message relayed over SMTP may embed images that its HTML shows with `cid:` links; the
-- relay keeps each part's Content-ID, and delivery writes it back, so the links resolve in
-- the message the recipient gets. The Public API's attachments have no such field (NULL).

ALTER TABLE attachments ADD COLUMN content_id TEXT;
