-- svc schema, version 13: a counter of changes to what authenticates a request
-- (docs/decisions.md, "API key lookups are cached"). Append-only.

-- One row. Every update or delete of an API key, a project or an organization adds 1, from
-- whichever process or connection writes it (the CLI beside a running server, a second node),
-- so a server that keeps resolved keys in memory reads this one row per request and forgets
-- them all when it moved: a revoked key is refused on the next request, as before the cache.
-- A new key needs no bump: only keys that were found are kept.
CREATE TABLE auth_epoch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n INTEGER NOT NULL
);
INSERT INTO auth_epoch (id, n) VALUES (1, 0);

CREATE TRIGGER api_keys_epoch_update AFTER UPDATE ON api_keys
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER api_keys_epoch_delete AFTER DELETE ON api_keys
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER projects_epoch_update AFTER UPDATE ON projects
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER projects_epoch_delete AFTER DELETE ON projects
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER organizations_epoch_update AFTER UPDATE ON organizations
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER organizations_epoch_delete AFTER DELETE ON organizations
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
