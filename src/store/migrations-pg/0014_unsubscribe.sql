-- svc schema on PostgreSQL, version 14: one-click unsubscribe, as SQLite's 0026 (its comment says
-- why): the emails column of a send's own choice (1 on, 0 off, NULL the project's setting), and
-- the webhook outbox trigger (0001) fires for `unsubscribed` too. Its function is unchanged.

ALTER TABLE emails ADD COLUMN one_click_unsubscribe INTEGER;

DROP TRIGGER email_events_webhooks ON email_events;
CREATE TRIGGER email_events_webhooks AFTER INSERT ON email_events FOR EACH ROW
WHEN (NEW.type IN ('sending', 'sent', 'delivered', 'queued', 'simulated', 'bounced', 'failed', 'opened', 'clicked',
                   'complained', 'unsubscribed'))
EXECUTE FUNCTION svc_email_events_webhooks();
