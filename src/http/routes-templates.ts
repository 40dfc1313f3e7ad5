import { z } from 'zod';
import { createTemplateSchema, updateTemplateSchema } from '../templates/schema.ts';
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
