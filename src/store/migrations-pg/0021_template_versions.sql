-- svc schema on PostgreSQL, version 21: template versions and layouts, as SQLite's 0033 (issue 35;
-- decisions.md, "Template versions and layouts"). Append-only.
--
-- templates keeps the latest version's content (what the editor holds; `version` is its number).
-- published_version: the version a send renders when it names none (PATCH publishes what it saves,
-- PATCH with draft does not, POST …/publish chooses one, an older one being a rollback).
-- is_layout: set at creation only; a layout wraps other templates through its one {{ content }} slot.
-- layout_id: the layout of the latest version (each version keeps its own in template_versions);
-- no foreign key, as webhook_id: `svc db copy` inserts templates in id order, a layout may be newer
-- than a template naming it, and the service refuses to delete a layout in use.
ALTER TABLE templates ADD COLUMN published_version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE templates ADD COLUMN is_layout INTEGER NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN layout_id TEXT;
UPDATE templates SET published_version = version;
CREATE INDEX templates_layout ON templates (layout_id) WHERE layout_id IS NOT NULL;

-- template_versions: every saved version of a template, its content as saved. A template's
-- existing content becomes its current version, published.
CREATE TABLE template_versions (
  template_id TEXT NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  subject_template TEXT NOT NULL,
  html_template TEXT,
  text_template TEXT,
  variables TEXT NOT NULL DEFAULT '{}',
  layout_id TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (template_id, version)
);
CREATE INDEX template_versions_layout ON template_versions (layout_id) WHERE layout_id IS NOT NULL;
INSERT INTO template_versions (template_id, version, subject_template, html_template, text_template, variables,
    layout_id, created_at)
  SELECT id, version, subject_template, html_template, text_template, variables, NULL, updated_at FROM templates;
