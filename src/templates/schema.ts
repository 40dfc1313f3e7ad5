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
