import { z } from 'zod';
import { outputSchemas } from '../emails/index.ts';
import { createTemplateSchema, updateTemplateSchema } from '../templates/schema.ts';
import { previewOut, previewTemplateSchema, sendTemplateTest, testSendSchema } from '../templates/index.ts';
import * as out from './management-schemas.ts';
import { memberHandler } from './org-route.ts';

/** A project's templates, from the dashboard. */

export const listTemplates = memberHandler(
  { summary: 'Templates', response: z.array(out.templateOut) },
  ({ params }, app) => app.templates.list(params.project_id!),
);

export const getTemplate = memberHandler({ summary: 'A template', response: out.templateOut }, ({ params }, app) =>
  app.templates.getTemplate(params.project_id!, params.template_id!),
);

export const createTemplate = memberHandler(
  { summary: 'Create a template', body: createTemplateSchema, response: out.templateOut },
  ({ params, body, actor }, app) => app.templates.create(params.project_id!, body as never, actor),
);

export const updateTemplate = memberHandler(
  { summary: 'Update a template (raises its version)', body: updateTemplateSchema, response: out.templateOut },
  ({ params, body, actor }, app) => app.templates.update(params.project_id!, params.template_id!, body as never, actor),
);

export const deleteTemplate = memberHandler({ summary: 'Delete a template' }, ({ params, actor }, app) =>
  app.templates.remove(params.project_id!, params.template_id!, actor),
);

export const previewTemplate = memberHandler(
  {
    summary: 'Render an unsaved template with sample variables, as a send would (nothing is stored)',
    body: previewTemplateSchema,
    response: previewOut,
    status: 200,
  },
  ({ body }, app) => app.templates.preview(body),
);

export const testSendTemplate = memberHandler(
  {
    summary:
      'Send the saved template to one address through the send rules, with no API key ' +
      '(env LIVE by default, or TEST); the answer is that of POST /v1/emails',
    body: testSendSchema,
    response: outputSchemas.sendResponseSchema,
    status: 202,
  },
  ({ org, params, body, actor }, app) =>
    sendTemplateTest(
      { templates: app.templates, emails: app.emails },
      { orgId: org.id, projectId: params.project_id!, templateId: params.template_id!, actor },
      body,
    ),
);
