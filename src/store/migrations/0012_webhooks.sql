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

-- One row per (event, active webhook) still to deliver: written by the trigger below in the
-- event's own transaction, so no event is lost between them and none is sent before its
-- transaction commits. The body is built here once, so every attempt sends the same bytes.
CREATE TABLE webhook_outbox (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
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

-- The subscribable events (decisions.md: the specification's, plus simulated and opened). The
-- body is the contract's ("Webhooks (push)"): id evt_<event id>, type email.<name>, created_at
-- with microseconds, data.email and data.event (the event's data; a click adds ip and
-- user_agent). Ids are random UUIDs made in SQL, so every writer of events (accept, delivery,
-- tracking, any process) feeds the outbox the same way, with nothing to register.
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events
WHEN NEW.type IN ('queued', 'sending', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'opened',
                  'clicked', 'simulated')
  AND EXISTS (SELECT 1 FROM webhooks)
BEGIN
  INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
  SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
    w.id, NEW.id, NEW.type,
    json_object(
    'id', 'evt_' || NEW.id,
    'type', 'email.' || NEW.type,
    'created_at', substr(NEW.created_at, 1, 23) || '000Z',
    'data', json_object(
      'email', json_object('id', e.id, 'from', e.from_email, 'to', json(e.to_emails), 'subject', e.subject,
                           'tags', json(e.tags), 'status', e.status),
      'event', CASE WHEN NEW.type = 'clicked'
                 THEN json_set(NEW.data, '$.ip', NEW.ip_address, '$.user_agent', NEW.user_agent)
                 ELSE json(NEW.data) END)),
    NEW.created_at, NEW.created_at
  FROM emails e JOIN webhooks w ON w.project_id = e.project_id AND w.is_active = 1
  WHERE e.seq = NEW.email_seq
    AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE j.value = NEW.type OR j.value = '*');

  -- A deactivated webhook keeps a record of what it missed (decisions.md: "skipped").
  INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, request_body, created_at)
  SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
    w.id, NEW.id, NEW.type, 0, 'skipped',
    json_object(
    'id', 'evt_' || NEW.id,
    'type', 'email.' || NEW.type,
    'created_at', substr(NEW.created_at, 1, 23) || '000Z',
    'data', json_object(
      'email', json_object('id', e.id, 'from', e.from_email, 'to', json(e.to_emails), 'subject', e.subject,
                           'tags', json(e.tags), 'status', e.status),
      'event', CASE WHEN NEW.type = 'clicked'
                 THEN json_set(NEW.data, '$.ip', NEW.ip_address, '$.user_agent', NEW.user_agent)
                 ELSE json(NEW.data) END)),
    NEW.created_at
  FROM emails e JOIN webhooks w ON w.project_id = e.project_id AND w.is_active = 0
  WHERE e.seq = NEW.email_seq
    AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE j.value = NEW.type OR j.value = '*');
END;
