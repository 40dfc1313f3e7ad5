// The rows of templates and template_versions as both stores read them, and their mapping.
import type { Template, TemplateVersion } from './schema.ts';

export type TemplateRow = Omit<Template, 'variables' | 'is_layout'> & { variables: string; is_layout: number };
export type VersionRow = Omit<TemplateVersion, 'variables'> & { variables: string };

export const toTemplate = (r: TemplateRow | undefined): Template | undefined =>
  r && {
    ...r,
    // PostgreSQL's INTEGER columns come back as numbers too; is_layout is 0 or 1 in both.
    is_layout: Number(r.is_layout) === 1,
    variables: JSON.parse(r.variables) as Record<string, unknown>,
  };

export const toVersion = (r: VersionRow | undefined): TemplateVersion | undefined =>
  r && { ...r, variables: JSON.parse(r.variables) as Record<string, unknown> };

/**
 * A row when layout $1 is in use: a template names it in its latest version (templates.layout_id)
 * or in its published one. Older versions do not hold a layout: publishing one checks its layout.
 */
export const LAYOUT_IN_USE_SQL = `SELECT 1 AS one FROM templates WHERE layout_id = $1
  UNION ALL
  SELECT 1 AS one FROM templates t JOIN template_versions v ON v.template_id = t.id AND v.version = t.published_version
  WHERE v.layout_id = $1
  LIMIT 1`;
