-- svc schema on PostgreSQL, version 22: `delivery_delayed`, as SQLite's 0034 (its comment says
-- why): recipients.delay_notified, and the webhook outbox trigger (0019) fires for
-- `delivery_delayed` too. Its function is unchanged.

ALTER TABLE recipients ADD COLUMN delay_notified INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER email_events_webhooks ON email_events;
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events FOR EACH ROW
WHEN (NEW.type IN ('sending', 'sent', 'delivered', 'queued', 'simulated', 'bounced', 'failed', 'opened', 'clicked',
                   'complained', 'unsubscribed', 'canceled', 'delivery_delayed'))
EXECUTE FUNCTION svc_email_events_webhooks();
