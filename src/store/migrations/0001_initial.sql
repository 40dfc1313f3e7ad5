-- svc schema, version 1. Append-only: never edit a released migration; add 0002_*.sql.
-- Times are ISO-8601 UTC strings with milliseconds (they sort as text).

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plan TEXT NOT NULL CHECK (plan IN ('FREE', 'PAID', 'PREMIUM', 'UNLIMITED')),
  daily_limit INTEGER,            -- optional organization daily ceiling (recipients/day)
  rate_limit_per_second INTEGER,  -- optional per-key request rate override
  dpa_accepted_at TEXT,
  dpa_accepted_by TEXT REFERENCES users(id),
  created_at TEXT NOT NULL
);

CREATE TABLE memberships (
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (organization_id, user_id)
);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  settings TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  UNIQUE (organization_id, name)
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  permissions TEXT NOT NULL CHECK (permissions IN ('FULL_ACCESS', 'SENDING_ONLY', 'READ_ONLY')),
  env TEXT NOT NULL CHECK (env IN ('LIVE', 'TEST')),
  created_by TEXT REFERENCES users(id),
  last_used_at TEXT,
  expires_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
);
-- "unique among active keys of the project": revoking frees the name.
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (project_id, name) WHERE revoked_at IS NULL;

CREATE TABLE templates (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  slug TEXT NOT NULL,
  subject_template TEXT NOT NULL,
  html_template TEXT,
  text_template TEXT,
  variables TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, slug)
);

CREATE TABLE suppressions (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  email TEXT NOT NULL,            -- lower-cased address
  reason TEXT NOT NULL CHECK (reason IN ('HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE', 'MANUAL')),
  source_email_id TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_id, email)
) WITHOUT ROWID;

CREATE TABLE domains (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  status TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'VERIFIED', 'FAILED')),
  dkim_selector TEXT,
  dkim_private_key TEXT,
  dkim_public_key TEXT,
  verified_at TEXT,
  created_at TEXT NOT NULL
);

CREATE TABLE project_domains (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  domain_id TEXT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_id, domain_id)
) WITHOUT ROWID;

-- seq orders emails newest first and serves the before/after cursors.
CREATE TABLE emails (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  api_key_id TEXT,
  env TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'API',
  status TEXT NOT NULL,
  from_email TEXT NOT NULL,
  from_name TEXT,
  to_emails TEXT NOT NULL,
  cc_emails TEXT,
  bcc_emails TEXT,
  reply_to TEXT,
  subject TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  headers TEXT NOT NULL DEFAULT '{}',
  html_body TEXT,
  text_body TEXT,
  template_id TEXT,
  template_version INTEGER,
  created_at TEXT NOT NULL,
  sent_at TEXT,
  delivered_at TEXT,
  failed_at TEXT,
  bounce_type TEXT,
  bounce_category TEXT,
  final_smtp_code INTEGER,
  final_smtp_enhanced TEXT,
  final_smtp_text TEXT,
  message_id TEXT,
  dkim_d TEXT,
  dkim_selector TEXT,
  dkim_signing_status TEXT,
  dkim_aligned INTEGER,
  spf_domain TEXT,
  spf_aligned INTEGER,
  spf_authorized_ip INTEGER,
  dmarc_aligned INTEGER,
  suppression_reason TEXT
);
CREATE INDEX emails_project ON emails (project_id, seq);
CREATE INDEX emails_project_status ON emails (project_id, status, seq);
CREATE INDEX emails_project_from ON emails (project_id, from_email COLLATE NOCASE, seq);
CREATE INDEX emails_project_created ON emails (project_id, created_at);

CREATE TABLE email_tags (
  email_seq INTEGER NOT NULL REFERENCES emails(seq) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY (project_id, tag, email_seq)
) WITHOUT ROWID;

-- One row per recipient delivery (to, cc and bcc each get one).
CREATE TABLE recipients (
  id INTEGER PRIMARY KEY,
  email_seq INTEGER NOT NULL REFERENCES emails(seq) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  address TEXT NOT NULL,
  address_lc TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('to', 'cc', 'bcc')),
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  lease_until TEXT,
  last_error TEXT,
  updated_at TEXT NOT NULL
);
CREATE INDEX recipients_email ON recipients (email_seq);
CREATE INDEX recipients_project_address ON recipients (project_id, address_lc, email_seq);
CREATE INDEX recipients_due ON recipients (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

CREATE TABLE attachments (
  email_seq INTEGER NOT NULL REFERENCES emails(seq) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  content BLOB NOT NULL,
  PRIMARY KEY (email_seq, position)
) WITHOUT ROWID;

CREATE TABLE email_events (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  email_seq INTEGER NOT NULL REFERENCES emails(seq) ON DELETE CASCADE,
  type TEXT NOT NULL,
  data TEXT NOT NULL DEFAULT '{}',
  ip_address TEXT,
  user_agent TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX email_events_email ON email_events (email_seq, seq);

CREATE TABLE idempotency_keys (
  project_id TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  response TEXT NOT NULL,
  email_id TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (project_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at);

-- Sending volume per organization: period 'YYYY-MM' (monthly) or 'YYYY-MM-DD' (daily).
CREATE TABLE usage_counters (
  organization_id TEXT NOT NULL,
  period TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, period)
) WITHOUT ROWID;
