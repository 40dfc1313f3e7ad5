-- svc schema, version 12: webhooks, their outbox and their delivery records
-- (docs/decisions.md, "Webhooks (issue 12)"). Append-only.

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  -- JSON array of event names, or ["*"] for every event.
  events TEXT NOT NULL,
  -- whsec_ + 64 hex. Kept as is: it is the HMAC key every POST is signed with.
  secret TEXT NOT NULL,
  is_active INTEGER NOT NULL DEFAULT 1,
  auto_disabled INTEGER NOT NULL DEFAULT 0,
  -- Events in a row that used every attempt; five deactivate the webhook, a success resets it.
  exhausted_in_a_row INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhooks_project ON webhooks (project_id);

-- One row per (event, subscribed webhook) still to deliver: written by the trigger below in the
-- event's own transaction, so no event is lost between them and none is sent before its
-- transaction commits. The row is small: which event (its seq) and the email's status at that
-- moment, the only part of the body that changes later. The dispatcher builds the JSON body when
-- it takes the row (webhooks/repo.ts), from the event row and the email's fields that never
-- change after accept, off the accepting thread. `payload` is set for rows that carry their own
-- body: a retry (its first attempt's body) and a manual redelivery (the recorded body), so every
-- attempt of an event sends the same bytes.
CREATE TABLE webhook_outbox (
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
  -- Attempts made so far.
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at);
CREATE INDEX webhook_outbox_webhook ON webhook_outbox (webhook_id);

-- Every attempt, immutable once written; and the events a deactivated webhook skipped.
CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  -- succeeded | failed | skipped
  status TEXT NOT NULL,
  http_status INTEGER,
  duration_ms INTEGER,
  error TEXT,
  request_body TEXT NOT NULL,
  -- At most 4 KiB, scrubbed of secrets.
  response_body TEXT,
  created_at TEXT NOT NULL,
  -- When the next attempt of this event is due; null when there is none.
  next_attempt_at TEXT
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, seq);

-- The subscribable events (decisions.md: the specification's, plus simulated and opened). Ids are
-- random UUIDs made in SQL, so every writer of events (accept, delivery, tracking, any process)
-- feeds the outbox the same way, with nothing to register. Every subscribed webhook gets its row,
-- an inactive one marked `skip`: the dispatcher keeps a record of what a deactivated webhook
-- missed (decisions.md: "skipped") with the body it would have been sent.
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
