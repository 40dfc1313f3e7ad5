-- svc schema, version 23: which classifier rule decided a recipient's last classified attempt,
-- and the email's first bounce (issue 29, item 4; decisions.md, "Which rule decided a bounce").
-- Append-only.
--
-- `bounce_rule` is describeRule()'s line (src/delivery/classify.ts), e.g. `the enhanced status
-- code "5.1.1"`, written with bounce_category: set by a bounce or a retry, NULL once delivered,
-- and NULL for rows from before this version. The email's copy follows its bounce_category.
ALTER TABLE recipients ADD COLUMN bounce_rule TEXT;
ALTER TABLE emails ADD COLUMN bounce_rule TEXT;
