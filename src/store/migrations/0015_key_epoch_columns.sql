-- svc schema, version 15: writing a key's last_used_at no longer moves the auth epoch
-- (migration 0013). Append-only.
--
-- The server writes last_used_at at most once a minute per key in use, and each write made
-- every server forget every key it kept: with many keys in use, the cache would be emptied
-- many times a second. last_used_at decides nothing about a request; every other column of a
-- key still moves the epoch; a column added to api_keys later must be added to this list.

DROP TRIGGER api_keys_epoch_update;
CREATE TRIGGER api_keys_epoch_update
AFTER UPDATE OF id, project_id, name, prefix, key_hash, permissions, env, created_by, expires_at, revoked_at,
                created_at ON api_keys
BEGIN
  UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
END;
