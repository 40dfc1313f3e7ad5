-- svc schema, version 5: settings the server records for the admin commands. Append-only.
-- `hostname`: the host name `svc serve` last ran with (--hostname, SVC_HOSTNAME, the
-- config file, else the OS host name). Admin commands given no host name of their own
-- use it, so `svc domains add/show/verify` name and check the host the server sends from.
CREATE TABLE server_settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
