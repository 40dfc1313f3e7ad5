-- svc schema, version 31: a placeholder on branch issue-35-templates for the lead's 0031, written on
-- another branch at the same time (migrations number with no gap). Delete this file at the merge.
SELECT 1;
