import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { createRouteSchema, receivedListSchema, updateRouteSchema } from '../receiving/index.ts';
import { principalOf } from './auth.ts';
import type { Handler } from './handler.ts';
import { memberHandler, sendFile } from './org-route.ts';

/** Receiving mail (issue 34): a project's routes, and the messages they took. */

const id = z.uuid();
const time = z.string();

export const routeOut = z.object({
  id,
  project_id: id,
  pattern: z.string(),
  domain_id: id,
  action: z.enum(['webhook', 'forward', 'hold']),
  webhook_id: id.nullable(),
  forward_to: z.array(z.string()).nullable(),
  created_at: time,
  updated_at: time,
});

/** A received message as lists show it (the detail adds its content: receivedDetailOut). */
export const receivedOut = z.object({
  id,
  direction: z.literal('inbound'),
  route_id: id.nullable(),
  action: z.enum(['webhook', 'forward', 'hold']),
  outcome: z.enum(['queued', 'forwarded', 'held', 'failed']),
  detail: z.string().nullable(),
  webhook: z.object({ status: z.enum(['pending', 'succeeded', 'failed']), attempts: z.number().int() }).nullable(),
  forwarded_email_id: id.nullable(),
  envelope: z.object({
    mail_from: z.string().nullable(),
    rcpt_to: z.array(z.string()),
    remote_ip: z.string().nullable(),
    helo: z.string().nullable(),
  }),
  from: z.string().nullable(),
  to: z.array(z.string()),
  subject: z.string(),
  message_id: z.string().nullable(),
  size: z.number().int(),
  auth: z.record(z.string(), z.unknown()),
  received_at: time,
});

const addressOut = z.object({ address: z.string(), name: z.string() });
export const receivedDetailOut = receivedOut.extend({
  from_name: z.string().nullable(),
  text: z.string().nullable(),
  html: z.string().nullable(),
  reply_text: z.string().nullable(),
  headers: z.array(z.object({ name: z.string(), value: z.string() })),
  attachments: z.array(
    z.object({
      index: z.number().int(),
      filename: z.string().nullable(),
      content_type: z.string(),
      size: z.number().int(),
      content_id: z.string().nullable(),
      disposition: z.enum(['attachment', 'inline']),
      content_base64: z.string().optional(),
      url: z.string().optional(),
    }),
  ),
  cc: z.array(addressOut),
  reply_to: z.array(addressOut),
  in_reply_to: z.string().nullable(),
  references: z.array(z.string()),
  date: z.string().nullable(),
  raw_url: z.string(),
});

export const listRoutes = memberHandler(
  { summary: "The project's routes of received mail, oldest first", response: z.array(routeOut) },
  ({ params }, app) => app.receiving.listRoutes(params.project_id!),
);

export const createRoute = memberHandler(
  {
    summary:
      'Route an address pattern of a receiving domain (exact, *@domain, prefix+*@domain) to a webhook, a forward or the API',
    body: createRouteSchema,
    response: routeOut,
  },
  ({ params, body, actor }, app) => app.receiving.createRoute(params.project_id!, body, actor),
);

export const getRoute = memberHandler({ summary: 'A route', response: routeOut }, ({ params }, app) =>
  app.receiving.getRoute(params.project_id!, params.route_id!),
);

export const updateRoute = memberHandler(
  { summary: "Change a route's action", body: updateRouteSchema, response: routeOut },
  ({ params, body, actor }, app) => app.receiving.updateRoute(params.project_id!, params.route_id!, body, actor),
);

export const deleteRoute = memberHandler({ summary: 'Delete a route' }, ({ params, actor }, app) =>
  app.receiving.deleteRoute(params.project_id!, params.route_id!, actor),
);

export const listReceived = memberHandler(
  {
    summary: 'Messages the routes received, newest first, with what each route did',
    query: receivedListSchema,
    response: z.array(receivedOut),
  },
  ({ params, query }, app) => app.receiving.listReceived(params.project_id!, query),
);

export const getReceived = memberHandler(
  {
    summary: 'A received message: envelope, headers, text, HTML, reply text, attachments, authentication results',
    response: receivedDetailOut,
  },
  ({ params }, app) => app.receiving.getReceived(params.project_id!, params.received_id!),
);

export const deleteReceived = memberHandler({ summary: 'Delete a received message' }, ({ params, actor }, app) =>
  app.receiving.deleteReceived(params.project_id!, params.received_id!, actor),
);

export const getReceivedRaw = memberHandler(
  { summary: 'A received message as it arrived (message/rfc822)', file: true },
  async ({ params, reply }, app) => {
    const f = await app.receiving.download(params.project_id!, { id: params.received_id!, index: null });
    return sendFile(reply, f.filename, f.content);
  },
);

const indexOf = (v: string | undefined) => {
  const n = z.coerce.number().int().min(0).max(9999).safeParse(v);
  if (!n.success) throw new AppError('not_found', 'The message has no attachment there');
  return n.data;
};

export const getReceivedAttachment = memberHandler(
  { summary: 'One attachment of a received message, by its index (0 first), as a file to save', file: true },
  async ({ params, reply }, app) => {
    const f = await app.receiving.download(params.project_id!, {
      id: params.received_id!,
      index: indexOf(params.index),
    });
    return sendFile(reply, f.filename, f.content);
  },
);

// The Public API's (API key): what an app reads of the messages its routes took.
const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

export const listReceivedEmails: Handler = async (req, _reply, { app }) => ({
  data: await app.receiving.listReceived(principalOf(req).project_id, req.query),
});

export const getReceivedEmail: Handler = async (req, _reply, { app }) => ({
  data: await app.receiving.getReceived(principalOf(req).project_id, idOf(req)),
});

export const getReceivedEmailRaw: Handler = async (req, reply, { app }) => {
  const f = await app.receiving.download(principalOf(req).project_id, { id: idOf(req), index: null });
  return sendFile(reply, f.filename, f.content);
};

/** A download link of a webhook's body (/r/<token>): the signed token, unexpired, is the credential. */
export const downloadReceived: Handler = async (req, reply, { app }) => {
  const token = (req.params as { '*': string })['*'];
  const target = await app.receiving.readLink(token);
  if (!target) throw new AppError('not_found', 'The link is unknown or has expired');
  const f = await app.receiving.download(null, target);
  return sendFile(reply, f.filename, f.content);
};
