/**
 * Layouts (decisions.md, "Template versions and layouts"): a layout is a template whose bodies
 * hold one slot, `{{ content }}`, that other templates fill by naming the layout's id. No general
 * include: the composition below is the only way one template reaches another, and the layout
 * is chosen by id and checked when a template is saved.
 */
import { fieldError } from '../validation.ts';
import type { TemplateSources } from './sandbox.ts';

/** The slot of a layout's html and text: exactly one, written `{{ content }}`. */
const SLOT = /\{\{\s*content\s*\}\}/g;
/** What the child's rendered body is called in the layout (a name a template can hardly mean). */
const BODY = 'svc_layout_body';

/** Refuses a layout whose html or text (each when present) has not exactly one `{{ content }}` slot. */
export function checkLayoutSlots(t: { html_template: string | null; text_template: string | null }): void {
  for (const field of ['html_template', 'text_template'] as const) {
    const source = t[field];
    if (source === null) continue;
    const slots = source.match(SLOT)?.length ?? 0;
    if (slots !== 1) throw fieldError(field, `a layout holds exactly one {{ content }} slot (found ${slots})`);
  }
}

/**
 * One template source: `child` rendered first (captured, so its lines keep their numbers), then
 * `layout` with the child's output in its slot, in one render of the same sandbox with the same
 * variables and time limit. The child's HTML is already escaped: `safe` keeps it as rendered.
 */
function wrap(child: string | null, layout: string | null): string | null {
  if (child === null || layout === null) return child;
  return `{% set ${BODY} %}${child}{% endset %}${layout.replace(SLOT, `{{ ${BODY} | safe }}`)}`;
}

/** The sources of `child` wrapped in `layout` (html in html, text in text; a body either lacks stays as is). */
export function wrapInLayout(
  child: TemplateSources,
  layout: { html_template: string | null; text_template: string | null },
): TemplateSources {
  return {
    subject: child.subject,
    html: wrap(child.html, layout.html_template),
    text: wrap(child.text, layout.text_template),
  };
}

/** A layout rendered on its own (its preview, a send naming it): its slot left empty. */
export function emptyLayout(layout: TemplateSources): TemplateSources {
  return wrapInLayout(
    { subject: layout.subject, html: layout.html === null ? null : '', text: layout.text === null ? null : '' },
    {
      html_template: layout.html,
      text_template: layout.text,
    },
  );
}
