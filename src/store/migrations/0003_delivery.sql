-- Delivery state of each recipient row, and what the email shows about its queue.
ALTER TABLE recipients ADD COLUMN domain TEXT;
ALTER TABLE recipients ADD COLUMN last_attempt_at TEXT;
ALTER TABLE recipients ADD COLUMN smtp_code INTEGER;
ALTER TABLE recipients ADD COLUMN smtp_enhanced TEXT;
ALTER TABLE recipients ADD COLUMN smtp_text TEXT;
ALTER TABLE recipients ADD COLUMN mx_host TEXT;
ALTER TABLE recipients ADD COLUMN bounce_type TEXT;
ALTER TABLE recipients ADD COLUMN bounce_category TEXT;
ALTER TABLE recipients ADD COLUMN sent_at TEXT;
ALTER TABLE recipients ADD COLUMN delivered_at TEXT;
UPDATE recipients SET domain = substr(address_lc, instr(address_lc, '@') + 1);

-- Due work in claim order; leases are re-checked in the claim itself.
DROP INDEX recipients_due;
CREATE INDEX recipients_due ON recipients (next_attempt_at, email_seq) WHERE next_attempt_at IS NOT NULL;

-- Destinations a server asked us to slow down (421 / 4.7.x), so `svc emails show` can say so.
CREATE TABLE destination_throttles (
  domain TEXT PRIMARY KEY,
  concurrency INTEGER NOT NULL,
  paused_until TEXT,
  reason TEXT,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
