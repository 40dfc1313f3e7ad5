import { z } from 'zod';
import { outputSchemas } from '../emails/index.ts';
import { createTemplateSchema, publishTemplateSchema, updateTemplateSchema } from '../templates/schema.ts';
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
  {
    summary: 'Update a template: saves a new version and publishes it, or with draft true leaves it unpublished',
    body: updateTemplateSchema,
    response: out.templateOut,
  },
  ({ params, body, actor }, app) => app.templates.update(params.project_id!, params.template_id!, body as never, actor),
);

export const deleteTemplate = memberHandler(
  { summary: 'Delete a template (409 for a layout in use)' },
  ({ params, actor }, app) => app.templates.remove(params.project_id!, params.template_id!, actor),
);

export const previewTemplate = memberHandler(
  {
    summary: 'Render an unsaved template with sample variables, as a send would (nothing is stored)',
    body: previewTemplateSchema,
    response: previewOut,
    status: 200,
  },
  ({ params, body }, app) => app.templates.preview(params.project_id!, body),
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

export const listTemplateVersions = memberHandler(
  {
    summary: "A template's saved versions, newest first, without bodies",
    response: z.array(out.templateVersionSummaryOut),
  },
  ({ params }, app) => app.templates.listVersions(params.project_id!, params.template_id!),
);

export const getTemplateVersion = memberHandler(
  { summary: 'One saved version of a template with its content', response: out.templateVersionOut },
  ({ params }, app) => app.templates.getVersion(params.project_id!, params.template_id!, Number(params.version)),
);

export const publishTemplate = memberHandler(
  {
    summary: 'Publish a saved version: sends use it from now on (an older version is a rollback)',
    body: publishTemplateSchema,
    response: out.templateOut,
    status: 200,
  },
  ({ params, body, actor }, app) => app.templates.publish(params.project_id!, params.template_id!, body, actor),
);
