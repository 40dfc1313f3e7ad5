-- svc schema on PostgreSQL, version 9: DMARC aggregate reports (RFC 7489 §7.2, issue 28 item 7). As SQLite's 0021.
--
-- Receivers mail their aggregate reports to dmarc@bounces.<domain>, the address svc's DMARC
-- record names in rua=; the inbound MX stores each report once (org_name + report_id: a
-- reporter that sends one twice changes nothing) with its rows, one per source IP and
-- result. `own_source` says the row's source IP was one of svc's outbound addresses when the
-- report arrived; `flagged` that it was not and the row failed DMARC (spoofing, or a sender
-- the domain forgot).
CREATE TABLE dmarc_reports (
  id TEXT PRIMARY KEY,
  domain_id TEXT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  org_name TEXT NOT NULL,
  report_id TEXT NOT NULL,
  begin_at TEXT NOT NULL,
  end_at TEXT NOT NULL,
  policy TEXT NOT NULL,
  received_at TEXT NOT NULL,
  UNIQUE (org_name, report_id)
);
CREATE INDEX dmarc_reports_domain ON dmarc_reports (domain_id, begin_at);

CREATE TABLE dmarc_report_rows (
  report_id TEXT NOT NULL REFERENCES dmarc_reports(id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  source_ip TEXT NOT NULL,
  count BIGINT NOT NULL,
  disposition TEXT NOT NULL,
  dkim_result TEXT,
  dkim_domain TEXT,
  spf_result TEXT,
  spf_domain TEXT,
  dkim_aligned TEXT NOT NULL,
  spf_aligned TEXT NOT NULL,
  own_source INTEGER NOT NULL,
  flagged INTEGER NOT NULL,
  PRIMARY KEY (report_id, n)
);

-- A report confirms or fails the DKIM signing of the emails it covers: those still
-- 'expected', signed for its domain, sent within its date range.
CREATE INDEX emails_dkim_expected ON emails (dkim_d, sent_at) WHERE dkim_signing_status = 'expected';
