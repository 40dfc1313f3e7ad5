import { z } from 'zod';
import { listKeysQuerySchema } from '../keys/index.ts';
import { createKeySchema } from '../keys/schema.ts';
import { parseInput } from '../validation.ts';
import * as out from './management-schemas.ts';
import { memberHandler } from './org-route.ts';

/** A project's API keys, from the dashboard. */

export const listApiKeys = memberHandler(
  { summary: 'API keys (never the key itself)', query: listKeysQuerySchema, response: z.array(out.apiKeyOut) },
  ({ params, query }, app) =>
    app.keys.listKeys(params.project_id!, parseInput(listKeysQuerySchema, query).include_revoked),
);

export const createApiKey = memberHandler(
  { summary: 'Create an API key (the key is shown once)', body: createKeySchema, response: out.apiKeyOut },
  ({ params, body, user_id, actor }, app) => app.keys.createKey(params.project_id!, body as never, user_id, actor),
);

export const revokeApiKey = memberHandler({ summary: 'Revoke an API key' }, ({ params, actor }, app) =>
  app.keys.revokeKey(params.key_id!, actor, params.project_id),
);
