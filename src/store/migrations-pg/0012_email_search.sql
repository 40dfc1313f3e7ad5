-- svc schema on PostgreSQL, version 12: the dashboard's list finds a project's emails by the API
-- key that sent them and by their source (issue 31, item 2). As SQLite's 0024.
CREATE INDEX emails_project_api_key_id ON emails (project_id, api_key_id, seq);
CREATE INDEX emails_project_source ON emails (project_id, source, seq);
