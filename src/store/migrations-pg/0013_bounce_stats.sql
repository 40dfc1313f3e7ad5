-- svc schema on PostgreSQL, version 13: the hourly stats rollup also counts bounces by category,
-- as SQLite's 0025 (its comment says why and how). The trigger (deferred to COMMIT, 0003) is
-- unchanged; its function writes the second row for a `bounced` event.

-- A bounced event's category; text that is not JSON has none (so a count never fails the event).
CREATE FUNCTION svc_bounce_category(data TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN data::jsonb ->> 'bounce_category';
EXCEPTION WHEN invalid_text_representation THEN
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION svc_email_events_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO email_stats (project_id, bucket_hour, type, count)
    SELECT project_id, substr(NEW.created_at, 1, 13), NEW.type, 1 FROM emails WHERE seq = NEW.email_seq
    ON CONFLICT (project_id, bucket_hour, type) DO UPDATE SET count = email_stats.count + 1;
  IF NEW.type = 'bounced' THEN
    INSERT INTO email_stats (project_id, bucket_hour, type, count)
      SELECT project_id, substr(NEW.created_at, 1, 13), 'bounced:' || coalesce(svc_bounce_category(NEW.data), 'unknown'), 1
      FROM emails WHERE seq = NEW.email_seq
      ON CONFLICT (project_id, bucket_hour, type) DO UPDATE SET count = email_stats.count + 1;
  END IF;
  RETURN NULL;
END $$;

-- Backfill the categories of the bounces already stored (one pass over the events, once).
INSERT INTO email_stats (project_id, bucket_hour, type, count)
  SELECT e.project_id, substr(ev.created_at, 1, 13), 'bounced:' || coalesce(svc_bounce_category(ev.data), 'unknown'),
         count(*)
  FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
  WHERE ev.type = 'bounced'
  GROUP BY 1, 2, 3;
