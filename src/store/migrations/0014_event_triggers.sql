-- svc schema, version 14: the two triggers on email_events, unchanged in what they do, test an
-- event's type with = … OR instead of IN (…). Append-only.
--
-- SQLite compiles `x IN (a list of more than two constants)` into a small temporary index that is
-- built once per run of the program, and a trigger's program runs once per row: every event paid
-- for building two of them, ~2.4 µs of its ~6.3 (docs/performance.md, "Hot paths"). An email
-- writes 1 event at accept and 13 when delivered to 3 recipients. The OR chains name the most
-- frequent types first.

DROP TRIGGER email_events_stats;
CREATE TRIGGER email_events_stats AFTER INSERT ON email_events
WHEN NEW.type = 'sent' OR NEW.type = 'delivered' OR NEW.type = 'queued' OR NEW.type = 'simulated'
  OR NEW.type = 'bounced' OR NEW.type = 'failed' OR NEW.type = 'opened' OR NEW.type = 'clicked'
  OR NEW.type = 'complained'
BEGIN
  INSERT INTO email_stats (project_id, bucket_hour, type, count)
    SELECT project_id, substr(NEW.created_at, 1, 13), NEW.type, 1 FROM emails WHERE seq = NEW.email_seq
    ON CONFLICT (project_id, bucket_hour, type) DO UPDATE SET count = count + 1;
END;

DROP TRIGGER email_events_webhooks;
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events
WHEN (NEW.type = 'sending' OR NEW.type = 'sent' OR NEW.type = 'delivered' OR NEW.type = 'queued'
      OR NEW.type = 'simulated' OR NEW.type = 'bounced' OR NEW.type = 'failed' OR NEW.type = 'opened'
      OR NEW.type = 'clicked' OR NEW.type = 'complained')
  AND EXISTS (SELECT 1 FROM webhooks)
BEGIN
  INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, event_seq, email_status, skip, next_attempt_at,
                              created_at)
  SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
    w.id, NEW.id, NEW.type, NEW.seq, e.status, 1 - w.is_active, NEW.created_at, NEW.created_at
  FROM emails e JOIN webhooks w ON w.project_id = e.project_id
  WHERE e.seq = NEW.email_seq
    AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE j.value = NEW.type OR j.value = '*');
END;
