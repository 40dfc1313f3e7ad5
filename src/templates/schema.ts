import { z } from 'zod';
import { LIMITS } from '../limits/index.ts';

export const slugSchema = z
  .string()
  .max(LIMITS.templateSlugChars)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lowercase letters, digits, - and _, starting with a letter or digit');

const noLineBreaks = (s: string) => !/[\r\n]/.test(s);

const fields = {
  name: z.string().trim().min(1).max(200),
  subject_template: z
    .string()
    .min(1)
    .max(LIMITS.subjectChars * 4)
    .refine(noLineBreaks, 'must not contain line breaks'),
  html_template: z.string().max(LIMITS.templateBodyChars).nullable().optional(),
  text_template: z.string().max(LIMITS.templateBodyChars).nullable().optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
};

const hasBody = (t: { html_template?: string | null | undefined; text_template?: string | null | undefined }) =>
  Boolean(t.html_template) || Boolean(t.text_template);

/** A version number of a template: 1, 2, 3 … */
const versionNumber = z.int().min(1);
/** The layout a template is wrapped in: a layout template of the same project, by id; null for none. */
const layoutId = z.string().min(1).max(100).nullable().optional();

export const createTemplateSchema = z
  .strictObject({
    ...fields,
    slug: slugSchema,
    /** A layout: its bodies hold one {{ content }} slot; set at creation only. */
    is_layout: z.boolean().optional(),
    layout_id: layoutId,
  })
  .refine(hasBody, { message: 'html_template or text_template is required', path: ['html_template'] });

export const updateTemplateSchema = z.strictObject({
  name: fields.name.optional(),
  subject_template: fields.subject_template.optional(),
  html_template: fields.html_template,
  text_template: fields.text_template,
  variables: fields.variables,
  layout_id: layoutId,
  /** True: the new version is saved unpublished (sends keep the published one). */
  draft: z.boolean().optional(),
});

/** POST …/templates/{id}/publish: the version sends use from now on (an older one: a rollback). */
export const publishTemplateSchema = z.strictObject({ version: versionNumber });

/** POST …/templates/preview: a template as the editor holds it, unsaved, and sample variables. */
export const previewTemplateSchema = z
  .strictObject({
    subject_template: fields.subject_template.optional(),
    html_template: fields.html_template,
    text_template: fields.text_template,
    variables: fields.variables,
    /** The layout the unsaved template is previewed in. */
    layout_id: layoutId,
    /** A saved template (id or slug) previewed instead of unsaved content, at `version` (default its latest). */
    template_id: z.string().min(1).max(200).optional(),
    version: versionNumber.optional(),
  })
  .superRefine((p, ctx) => {
    if (p.template_id === undefined) {
      if (p.subject_template === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['subject_template'],
          message: 'subject_template or template_id is required',
        });
      }
      if (p.version !== undefined)
        ctx.addIssue({ code: 'custom', path: ['version'], message: 'version needs template_id' });
      return;
    }
    for (const f of ['subject_template', 'html_template', 'text_template', 'layout_id'] as const) {
      if (p[f] !== undefined)
        ctx.addIssue({ code: 'custom', path: [f], message: `${f} and template_id are not sent together` });
    }
  });

/** What a preview answers: the template rendered as a send would render it. */
export const previewOut = z.object({ subject: z.string(), html: z.string().nullable(), text: z.string().nullable() });

/**
 * POST …/templates/{id}/test-send: the saved template sent to one address from `from`, in
 * `env` (LIVE: delivered, through every LIVE rule; TEST: stored as SIMULATED). Without
 * `variables`, the template's own sample `variables` are used.
 */
export const testSendSchema = z.strictObject({
  to: z.email(),
  from: z.email(),
  env: z.enum(['LIVE', 'TEST']).default('LIVE'),
  variables: fields.variables,
  /** The version sent, draft or published; default the latest. */
  version: versionNumber.optional(),
});

export type CreateTemplateInput = z.input<typeof createTemplateSchema>;
export type UpdateTemplateInput = z.input<typeof updateTemplateSchema>;

/** The content of one saved version of a template. */
export interface TemplateContent {
  subject_template: string;
  html_template: string | null;
  text_template: string | null;
  variables: Record<string, unknown>;
  layout_id: string | null;
}

/** One saved version of a template, as it was saved. */
export interface TemplateVersion extends TemplateContent {
  template_id: string;
  version: number;
  created_at: string;
}

export interface Template {
  id: string;
  project_id: string;
  name: string;
  slug: string;
  subject_template: string;
  html_template: string | null;
  text_template: string | null;
  variables: Record<string, unknown>;
  /** The latest version's number (the content above is that version's). */
  version: number;
  /** The version a send renders when it names none. */
  published_version: number;
  is_layout: boolean;
  layout_id: string | null;
  created_at: string;
  updated_at: string;
}
