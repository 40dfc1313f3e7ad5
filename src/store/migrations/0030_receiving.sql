-- svc schema, version 30: receiving mail (issue 34; decisions.md, "Receiving mail"). Append-only.
--
-- domains.receiving: 1 when the domain receives mail for its routes (its MX points at svc).
ALTER TABLE domains ADD COLUMN receiving INTEGER NOT NULL DEFAULT 0;

-- inbound_routes: a project's address pattern on one of its receiving domains, and what is done
-- with a message to it. kind: exact (local_part@domain), catchall (*@domain), prefix
-- (local_part+*@domain). action: webhook (POST to webhook_id, signed and retried like its
-- events), forward (forward_to, a JSON array, through svc's own delivery) or hold (kept for the
-- API). webhook_id has no foreign key: a route whose webhook was deleted holds its mail.
CREATE TABLE inbound_routes (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  domain_id TEXT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  domain TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('exact', 'catchall', 'prefix')),
  local_part TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('webhook', 'forward', 'hold')),
  webhook_id TEXT,
  forward_to TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (domain, kind, local_part)
);
CREATE INDEX inbound_routes_project ON inbound_routes (project_id, seq);

-- received_emails: a message received for one route (a message to several routes is a row per
-- route), kept as received (raw_message) with what the route did: outcome queued (a webhook
-- event in the outbox), forwarded (forwarded_email_id), held, or failed (detail says why).
-- auth: the message's SPF, DKIM, DMARC and ARC results (JSON). Deleted by retention with the emails.
CREATE TABLE received_emails (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  route_id TEXT,
  action TEXT NOT NULL,
  outcome TEXT NOT NULL,
  detail TEXT,
  forwarded_email_id TEXT,
  mail_from TEXT,
  rcpt_to TEXT NOT NULL,
  remote_ip TEXT,
  helo TEXT,
  from_email TEXT,
  to_emails TEXT NOT NULL,
  subject TEXT NOT NULL,
  message_id TEXT,
  size INTEGER NOT NULL,
  auth TEXT NOT NULL,
  raw_message BLOB NOT NULL,
  received_at TEXT NOT NULL
);
CREATE INDEX received_emails_project ON received_emails (project_id, seq);
CREATE INDEX received_emails_received_at ON received_emails (received_at);

-- A received message's webhook event and its records, found by the message's id (the event's
-- id); partial, so the other events' writes pay nothing for them.
CREATE INDEX webhook_outbox_received ON webhook_outbox (event_id) WHERE event_type = 'email.received';
CREATE INDEX webhook_deliveries_received ON webhook_deliveries (event_id) WHERE event_type = 'email.received';
