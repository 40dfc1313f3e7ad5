import { AppError } from '../errors.ts';
import { isUuid } from '../lib/ids.ts';
import { fieldError } from '../validation.ts';
import { emptyLayout, wrapInLayout } from './layout.ts';
import type { TemplateSources } from './sandbox.ts';
import type { Template, TemplateContent, TemplateVersion } from './schema.ts';
import type { TemplatesStore } from './store.ts';

/**
 * What a template's versions and layout make of its content: the version a render uses, the
 * layout a save names, and the sources one render takes (decisions.md, "Template versions and
 * layouts").
 */
export function createTemplateContent(repo: TemplatesStore) {
  /** Version `version` of `t`, or a 422 naming `field` when it has none. */
  async function versionOf(t: Template, version: number, field: string): Promise<TemplateVersion> {
    const v = await repo.findVersion(t.id, version);
    if (!v) throw fieldError(field, `template ${t.slug} has no version ${version}`);
    return v;
  }

  /**
   * The layout `ref` (id or slug) names for template `self` of `projectId`, checked when a
   * template is saved or a version published: a layout of the same project, never the template
   * itself, and never for a layout. A 422 naming layout_id otherwise.
   */
  async function checkLayout(
    projectId: string,
    self: { id: string | null; slug: string; is_layout: boolean },
    ref: string | null,
  ): Promise<Template | null> {
    if (ref === null) return null;
    const layout = (isUuid(ref) ? await repo.findById(ref) : undefined) ?? (await repo.findBySlug(projectId, ref));
    if (layout && (layout.id === self.id || (self.id === null && layout.slug === self.slug))) {
      throw fieldError('layout_id', 'a template cannot name itself as its layout');
    }
    if (self.is_layout) throw fieldError('layout_id', 'a layout cannot name a layout');
    if (!layout || layout.project_id !== projectId) throw fieldError('layout_id', `no template ${ref} in this project`);
    if (!layout.is_layout) throw fieldError('layout_id', `template ${layout.slug} is not a layout`);
    return layout;
  }

  /**
   * The sources one render takes for content `c` of template `t`: wrapped in its layout's
   * published version (read now: a send uses the layout as published at send time), or, for a
   * layout itself, with its slot left empty.
   */
  async function sourcesOf(
    t: Pick<Template, 'project_id' | 'is_layout'>,
    c: TemplateContent,
  ): Promise<TemplateSources> {
    const own = { subject: c.subject_template, html: c.html_template, text: c.text_template };
    if (t.is_layout) return emptyLayout(own);
    if (c.layout_id === null) return own;
    const layout = await repo.findById(c.layout_id);
    if (!layout || layout.project_id !== t.project_id || !layout.is_layout) {
      const message = `the layout ${c.layout_id} is gone`;
      throw new AppError('template_render_error', `The template could not be rendered: ${message}`, {
        field: 'layout_id',
        message,
      });
    }
    const published = (await repo.findVersion(layout.id, layout.published_version))!;
    return wrapInLayout(own, published);
  }

  return { versionOf, checkLayout, sourcesOf };
}
