-- svc schema, version 25: the hourly stats rollup also counts bounces by category (issue 31, the
-- dashboard's usage charts). Append-only.
--
-- A `bounced` event is counted twice in email_stats: once as `bounced` (as before) and once as
-- `bounced:<category>`, its data's bounce_category (src/delivery/classify.ts), `unknown` when it
-- has none. GET .../stats reads the second rows into `bounced_by_category` (src/stats/service.ts),
-- still from a range of the rollup's primary key. The trigger's WHEN clause is unchanged; the
-- second INSERT tests the type first, so any other event pays only that test. The JSON is read
-- only when valid, so that a count can never make an event's insert fail (0010).
DROP TRIGGER email_events_stats;
CREATE TRIGGER email_events_stats AFTER INSERT ON email_events
WHEN NEW.type = 'sent' OR NEW.type = 'delivered' OR NEW.type = 'queued' OR NEW.type = 'simulated'
  OR NEW.type = 'bounced' OR NEW.type = 'failed' OR NEW.type = 'opened' OR NEW.type = 'clicked'
  OR NEW.type = 'complained'
BEGIN
  INSERT INTO email_stats (project_id, bucket_hour, type, count)
    SELECT project_id, substr(NEW.created_at, 1, 13), NEW.type, 1 FROM emails WHERE seq = NEW.email_seq
    ON CONFLICT (project_id, bucket_hour, type) DO UPDATE SET count = count + 1;
  INSERT INTO email_stats (project_id, bucket_hour, type, count)
    SELECT project_id, substr(NEW.created_at, 1, 13),
           'bounced:' || coalesce(CASE WHEN json_valid(NEW.data) THEN json_extract(NEW.data, '$.bounce_category') END,
                                  'unknown'),
           1
    FROM emails WHERE NEW.type = 'bounced' AND seq = NEW.email_seq
    ON CONFLICT (project_id, bucket_hour, type) DO UPDATE SET count = count + 1;
END;

-- Backfill the categories of the bounces already stored (one pass over the events, once).
INSERT INTO email_stats (project_id, bucket_hour, type, count)
  SELECT e.project_id, substr(ev.created_at, 1, 13),
         'bounced:' || coalesce(CASE WHEN json_valid(ev.data) THEN json_extract(ev.data, '$.bounce_category') END,
                                'unknown'),
         count(*)
  FROM email_events ev JOIN emails e ON e.seq = ev.email_seq
  WHERE ev.type = 'bounced'
  GROUP BY 1, 2, 3;
