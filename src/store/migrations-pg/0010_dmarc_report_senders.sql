-- svc schema on PostgreSQL, version 10: who sent each DMARC aggregate report, for the daily limit
-- per reporter (src/inbound/dmarc-limits.ts; decisions.md). As SQLite's 0022.
--
-- `sender_ip` is the connecting IP of the SMTP session that brought the report (NULL when fed to
-- `svc inbound process`, and for reports from before this version); `row_count` how many rows
-- it holds. A reporter's reports of today, by org_name and by sender_ip, are counted per domain.
ALTER TABLE dmarc_reports ADD COLUMN sender_ip TEXT;
ALTER TABLE dmarc_reports ADD COLUMN row_count INTEGER NOT NULL DEFAULT 0;
UPDATE dmarc_reports SET row_count = (SELECT count(*) FROM dmarc_report_rows w WHERE w.report_id = dmarc_reports.id);
CREATE INDEX dmarc_reports_received ON dmarc_reports (domain_id, received_at);
