-- svc schema, version 10: the stats rollup behind GET .../projects/{id}/stats. Append-only.
-- One row per (project, UTC hour, event type): a count kept by a trigger on email_events,
-- so it is written in the same transaction as the event, by every writer (accept,
-- delivery, tracking), and the stats endpoint never scans emails or events.
-- Day granularity sums the 24 hours of a day. The row outlives its emails (a rollup is
-- history); it goes with its project (the trigger below: no foreign key, so that a count
-- can never make an event's insert fail, even for an email whose project row is missing
-- in a database once written with foreign keys off).
CREATE TABLE email_stats (
  project_id TEXT NOT NULL,
  bucket_hour TEXT NOT NULL, -- 'YYYY-MM-DDTHH' of the event's created_at (UTC)
  type TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (project_id, bucket_hour, type)
) WITHOUT ROWID;

-- The counted types (src/stats/schema.ts, STAT_TYPES): each event is one unit; queued and
-- simulated are written once per email, the others once per recipient (or per open, per
-- click). sending and smtp_connected are delivery internals and are not counted.
CREATE TRIGGER email_events_stats AFTER INSERT ON email_events
WHEN NEW.type IN ('queued', 'simulated', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'opened', 'clicked')
BEGIN
  INSERT INTO email_stats (project_id, bucket_hour, type, count)
    SELECT project_id, substr(NEW.created_at, 1, 13), NEW.type, 1 FROM emails WHERE seq = NEW.email_seq
    ON CONFLICT (project_id, bucket_hour, type) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER projects_stats_delete AFTER DELETE ON projects
BEGIN
  DELETE FROM email_stats WHERE project_id = OLD.id;
END;

-- Backfill from the events already stored.
INSERT INTO email_stats (project_id, bucket_hour, type, count)
  SELECT e.project_id, substr(ev.created_at, 1, 13), ev.type, count(*)
  FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
  WHERE ev.type IN ('queued', 'simulated', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'opened', 'clicked')
  GROUP BY 1, 2, 3;
