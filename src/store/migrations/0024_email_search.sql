-- svc schema, version 24: the dashboard's list finds a project's emails by the API key that sent
-- them and by their source (issue 31, item 2; list-query.ts). Append-only.
--
-- Each index walks a project's emails of one key (or one source) newest first, so a page of a
-- key that sent a few emails among a million, or of the rare SMTP ones, reads only its own rows.
-- A subject search has no index: it is a substring, checked on the rows the other filters leave.
-- The key's index is not named `..._key`: PostgreSQL's own UNIQUE indexes end so
-- (test/postgres-schema.test.ts).
CREATE INDEX emails_project_api_key_id ON emails (project_id, api_key_id, seq);
CREATE INDEX emails_project_source ON emails (project_id, source, seq);
