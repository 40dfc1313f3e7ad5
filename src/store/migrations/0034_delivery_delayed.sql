-- svc schema, version 34: `delivery_delayed` (issue 35, item 2; decisions.md, "delivery_delayed"). Append-only.
--
-- 1. recipients.delay_notified: how many delay notices a recipient has had (0 none, 1 its first
--    deferral, 2 past 1 h, 3 past 4 h, 4 past 24 h), so each is given once, whichever node
--    records the deferral (delivery/outcome-writes.ts, delayLevel).
-- 2. The webhook outbox trigger (0031) fires for `delivery_delayed` too. src/events/index.ts
--    WEBHOOK_EVENTS is the list; test/contract/event-triggers.test.ts holds this trigger to it.

ALTER TABLE recipients ADD COLUMN delay_notified INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER email_events_webhooks;
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events
WHEN (NEW.type = 'sending' OR NEW.type = 'sent' OR NEW.type = 'delivered' OR NEW.type = 'queued'
      OR NEW.type = 'simulated' OR NEW.type = 'bounced' OR NEW.type = 'failed' OR NEW.type = 'opened'
      OR NEW.type = 'clicked' OR NEW.type = 'complained' OR NEW.type = 'unsubscribed' OR NEW.type = 'canceled'
      OR NEW.type = 'delivery_delayed')
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
