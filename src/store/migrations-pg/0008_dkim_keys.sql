-- svc schema on PostgreSQL, version 8 (SQLite's 20): DKIM keys that rotate, and Ed25519 beside RSA (issue 28, items 5 and 6). Append-only.
-- A domain has several keys over time, each under its own selector: `pending` (made by a
-- rotation, its record not yet seen in DNS: not signing), `active` (signing), `retiring` (replaced,
-- its record kept listed until `retire_after`), `retired` (its record may be removed). Which key
-- signs and when one moves on is decided in src/domains/dkim-keys.ts for both stores.
CREATE TABLE domain_dkim_keys (
  id TEXT PRIMARY KEY,
  domain_id TEXT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  selector TEXT NOT NULL,
  algorithm TEXT NOT NULL CHECK (algorithm IN ('rsa', 'ed25519')),
  -- PKCS#8 PEM.
  private_key TEXT NOT NULL,
  -- The p= tag: base64 SPKI DER for RSA, the raw 32-byte key in base64 for Ed25519 (RFC 8463).
  public_key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'retiring', 'retired')),
  created_at TEXT NOT NULL,
  activated_at TEXT,
  retire_after TEXT,
  UNIQUE (domain_id, selector)
);
-- One rotation at a time per algorithm: a second pending key is refused (409) before it gets here.
CREATE UNIQUE INDEX domain_dkim_keys_one_pending ON domain_dkim_keys (domain_id, algorithm) WHERE state = 'pending';

-- The key every domain has signed with becomes its active RSA key, under the same id as the
-- domain (what src/domains/dkim-keys.ts reads for a domain stored without key rows), so a data
-- dir keeps signing with the same key after the upgrade. The domains' dkim_* columns stay: they
-- name the active RSA key, kept in step by every switch.
INSERT INTO domain_dkim_keys (id, domain_id, selector, algorithm, private_key, public_key, state, created_at, activated_at)
SELECT id, id, dkim_selector, 'rsa', dkim_private_key, dkim_public_key, 'active', created_at, coalesce(verified_at, created_at)
FROM domains
WHERE dkim_selector IS NOT NULL AND dkim_private_key IS NOT NULL AND dkim_public_key IS NOT NULL;
