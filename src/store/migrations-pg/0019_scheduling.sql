-- svc schema on PostgreSQL, version 19: scheduled sending, as SQLite's 0031 (its comment says
-- why): emails.scheduled_at, and the webhook outbox trigger (0014) fires for `canceled` too. Its
-- function is unchanged.

ALTER TABLE emails ADD COLUMN scheduled_at TEXT;

DROP TRIGGER email_events_webhooks ON email_events;
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events FOR EACH ROW
WHEN (NEW.type IN ('sending', 'sent', 'delivered', 'queued', 'simulated', 'bounced', 'failed', 'opened', 'clicked',
                   'complained', 'unsubscribed', 'canceled'))
EXECUTE FUNCTION svc_email_events_webhooks();
