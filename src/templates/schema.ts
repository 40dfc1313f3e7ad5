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

export const createTemplateSchema = z
  .strictObject({ ...fields, slug: slugSchema })
  .refine(hasBody, { message: 'html_template or text_template is required', path: ['html_template'] });

export const updateTemplateSchema = z.strictObject({
  name: fields.name.optional(),
  subject_template: fields.subject_template.optional(),
  html_template: fields.html_template,
  text_template: fields.text_template,
  variables: fields.variables,
});

/** POST …/templates/preview: a template as the editor holds it, unsaved, and sample variables. */
export const previewTemplateSchema = z.strictObject({
  subject_template: fields.subject_template,
  html_template: fields.html_template,
  text_template: fields.text_template,
  variables: fields.variables,
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
});

export type CreateTemplateInput = z.input<typeof createTemplateSchema>;
export type UpdateTemplateInput = z.input<typeof updateTemplateSchema>;

export interface Template {
  id: string;
  project_id: string;
  name: string;
  slug: string;
  subject_template: string;
  html_template: string | null;
  text_template: string | null;
  variables: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}
