-- svc schema on PostgreSQL, version 23: the webhook outbox is filled once per statement that
-- writes events, not once per event. A delivered email's outcome writes its events (~9 for three
-- recipients) in one statement; the per-row trigger ran its function, and its check for any
-- webhook, once for each (10 nested statements per delivered email in bench:nodes). The rows it
-- writes are the same, ordered by event, then by webhook (the per-row trigger left the order of
-- one event's webhooks unsaid). SQLite keeps its per-row trigger (0034), where a trigger is no
-- round trip and no function call.

DROP TRIGGER email_events_webhooks ON email_events;
DROP FUNCTION svc_email_events_webhooks();

CREATE FUNCTION svc_email_events_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks) THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, event_seq, email_status, skip, next_attempt_at,
                              created_at)
  SELECT gen_random_uuid()::text, w.id, n.id, n.type, n.seq, e.status, 1 - w.is_active, n.created_at, n.created_at
  FROM new_events n JOIN emails e ON e.seq = n.email_seq JOIN webhooks w ON w.project_id = e.project_id
  WHERE n.type IN ('sending', 'sent', 'delivered', 'queued', 'simulated', 'bounced', 'failed', 'opened', 'clicked',
                   'complained', 'unsubscribed', 'canceled', 'delivery_delayed')
    AND (w.events::jsonb ? n.type OR w.events::jsonb ? '*')
  ORDER BY n.seq, w.seq;
  RETURN NULL;
END $$;

CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events REFERENCING NEW TABLE AS new_events
FOR EACH STATEMENT EXECUTE FUNCTION svc_email_events_webhooks();
