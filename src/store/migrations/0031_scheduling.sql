-- svc schema, version 31: scheduled sending (issue 35; decisions.md, "Scheduled sending"). Append-only.
--
-- 1. emails.scheduled_at: when a send asked to go out, NULL for at once. Its recipients' first
--    next_attempt_at is that time, so delivery claims them then and not before (recipients_due),
--    on every node, across restarts: the schedule is the queue itself.
-- 2. A scheduled email cancelled before it started becomes CANCELED (an extension of EmailStatus)
--    with a `canceled` event, which fires the webhooks that listen to it: the webhook outbox
--    trigger (0026) names it, last. src/events/index.ts WEBHOOK_EVENTS is the list;
--    test/contract/event-triggers.test.ts holds this trigger to it.

ALTER TABLE emails ADD COLUMN scheduled_at TEXT;

DROP TRIGGER email_events_webhooks;
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events
WHEN (NEW.type = 'sending' OR NEW.type = 'sent' OR NEW.type = 'delivered' OR NEW.type = 'queued'
      OR NEW.type = 'simulated' OR NEW.type = 'bounced' OR NEW.type = 'failed' OR NEW.type = 'opened'
      OR NEW.type = 'clicked' OR NEW.type = 'complained' OR NEW.type = 'unsubscribed' OR NEW.type = 'canceled')
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
