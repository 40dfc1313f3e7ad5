-- svc schema, version 13: the webhook outbox row written with an event is small (docs/decisions.md,
-- "Webhooks (issue 12)"). Append-only.
--
-- Version 12 built each event's JSON body in the trigger, inside the transaction that accepts the
-- email, and stored it (~1.3 KB) in the outbox: the accept paid for the JSON and for writing it.
-- Now the trigger stores what the body cannot be rebuilt from later: which event (its seq) and the
-- email's status at that moment. The dispatcher builds the body when it takes the row, from the
-- event row, the email's fields that never change after accept (id, from, to, subject, tags) and
-- that stored status, so every attempt sends the same bytes. `payload` stays for rows that carry
-- their own body: a manual redelivery (the recorded body), a retry (the body of its first
-- attempt), and rows queued before this version.
-- The trigger names the table: it goes first, and comes back below in its new form.
DROP TRIGGER email_events_webhooks;
CREATE TABLE webhook_outbox_v13 (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  -- email_events.seq of the event; null for rows that carry their payload.
  event_seq INTEGER,
  -- The email's status when the event was written (data.email.status of the body).
  email_status TEXT,
  payload TEXT,
  -- 1 when the webhook was inactive as the event happened: recorded as skipped, never sent.
  skip INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
INSERT INTO webhook_outbox_v13 (seq, id, webhook_id, event_id, event_type, payload, attempts, next_attempt_at,
                                created_at)
  SELECT seq, id, webhook_id, event_id, event_type, payload, attempts, next_attempt_at, created_at
  FROM webhook_outbox;
DROP TABLE webhook_outbox;
ALTER TABLE webhook_outbox_v13 RENAME TO webhook_outbox;
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at);
CREATE INDEX webhook_outbox_webhook ON webhook_outbox (webhook_id);

-- Every subscribed webhook gets its row, an inactive one marked `skip`: the dispatcher keeps a
-- record of what a deactivated webhook missed (decisions.md: "skipped") with the body it would
-- have been sent, built the one way every body is built (webhooks/repo.ts).
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events
WHEN NEW.type IN ('queued', 'sending', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'opened',
                  'clicked', 'simulated')
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
