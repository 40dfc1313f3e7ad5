-- svc schema, version 11: the onboarding trial and resends (docs/decisions.md, "Onboarding
-- trial and resend"). Append-only.

-- The one email a project sent under the onboarding trial: a LIVE email from the server's
-- sandbox domain to the key creator's own address. It is never resent.
ALTER TABLE emails ADD COLUMN is_trial INTEGER NOT NULL DEFAULT 0;
-- Once per project. The accept transaction checks it before inserting; the index makes it hold
-- for any writer (a second node on a shared database) and is tiny: one row per project at most.
CREATE UNIQUE INDEX emails_trial_once ON emails (project_id) WHERE is_trial = 1;

-- The id of the email a resend copied; null for an email sent through the API or SMTP.
-- No foreign key: like the audit log, a resend's record outlives the original.
ALTER TABLE emails ADD COLUMN resent_from TEXT;
