-- svc schema, version 24: the dashboard's list finds a project's emails by the API key that sent
-- them, by their source and by a word of their subject (issue 31, item 2; list-query.ts).
-- Append-only.
--
-- The first two indexes walk a project's emails of one key (or one source) newest first, so a
-- page of a key that sent a few emails among a million, or of the rare SMTP ones, reads only its
-- own rows. The key's index is not named `..._key`: PostgreSQL's own UNIQUE indexes end so
-- (test/postgres-schema.test.ts).
CREATE INDEX emails_project_api_key_id ON emails (project_id, api_key_id, seq);
CREATE INDEX emails_project_source ON emails (project_id, source, seq);
-- A subject search is a substring, which no b-tree can seek: it is checked on each email,
-- newest first, until the page is full. This index holds the subjects in that order, so the
-- check reads the index alone and not the rows: a search that matches nothing among a million
-- emails takes about 0.1 s, not 1 s (bench:dashboard). It costs an entry of the subject's size
-- on every accept. SQLite only: a scan here holds the process's one thread (PostgreSQL's does
-- not, and its b-tree could not hold a subject of 998 multi-byte characters).
CREATE INDEX emails_project_subject ON emails (project_id, seq, subject);
