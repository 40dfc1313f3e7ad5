import { z } from 'zod';
import {
  batchRequestSchema,
  listQuerySchema,
  outputSchemas as out,
  rawSendSchema,
  rescheduleSchema,
  scheduleViewSchema,
  sendRequestSchema,
} from '../emails/index.ts';
import { errorRegistry } from '../errors.ts';
import { receivedListSchema } from '../receiving/index.ts';
import { emailDetailSchema, snapshotSchema } from '../top/schema.ts';
import { topFilterSchema } from '../top/filter.ts';
import { VERSION } from '../version.ts';
import type { Operation } from './org-route.ts';
import { documentedOperations } from './routes.ts';
import { receivedDetailOut, receivedOut } from './routes-receiving.ts';

const json = (s: z.ZodType, io: 'input' | 'output' = 'output') =>
  z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const data = (schema: object) => ({
  'application/json': { schema: { type: 'object', required: ['data'], properties: { data: schema } } },
});
/**
 * The error responses of an operation: `statuses`, and 503 for every one, since any request
 * may meet a server shutting down, a full disk or too many bytes in flight.
 */
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    [...statuses, 503].map((s) => [
      String(s),
      {
        description: Object.entries(errorRegistry)
          .filter(([, v]) => v.status === s && !('smtpOnly' in v))
          .map(([k]) => k)
          .join(', '),
        content: { 'application/json': { schema: ref('Error') } },
      },
    ]),
  );

/**
 * The OpenAPI 3.1 document of the Public and Management APIs, generated from
 * the zod schemas that validate requests (management handlers carry theirs:
 * the route table, src/http/routes.ts).
 */
export function buildOpenApi(): Record<string, unknown> {
  const listParams = Object.entries(
    (json(listQuerySchema, 'input') as { properties: Record<string, object> }).properties,
  );
  const idParam = { name: 'email_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
  const idem = { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } };
  return {
    openapi: '3.1.0',
    info: { title: 'svc API', version: VERSION },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'svc_live_… or svc_test_… API key' },
        session: { type: 'http', scheme: 'bearer', description: 'svc_at_… access token from POST /v1/auth/login' },
      },
      schemas: {
        EmailSendRequest: json(sendRequestSchema, 'input'),
        BatchSendRequest: json(batchRequestSchema, 'input'),
        RawSendRequest: json(rawSendSchema, 'input'),
        RescheduleRequest: json(rescheduleSchema, 'input'),
        ScheduleView: json(scheduleViewSchema),
        EmailSendResponseData: json(out.sendResponseSchema),
        BatchSendResponseData: json(out.batchResponseSchema),
        EmailListItem: json(out.emailListItemSchema),
        EmailDetail: json(out.emailDetailSchema),
        EmailEventPublic: json(out.eventSchema),
        Error: json(out.errorEnvelopeSchema),
        TopSnapshot: json(snapshotSchema),
        TopEmail: json(emailDetailSchema),
        ReceivedEmail: json(receivedOut),
        ReceivedEmailDetail: json(receivedDetailOut),
      },
    },
    security: [{ apiKey: [] }],
    paths: {
      '/v1/emails': {
        post: {
          operationId: 'sendEmail',
          parameters: [idem],
          requestBody: { required: true, content: { 'application/json': { schema: ref('EmailSendRequest') } } },
          responses: {
            '202': { description: 'accepted', content: data(ref('EmailSendResponseData')) },
            '200': { description: 'idempotent replay', content: data(ref('EmailSendResponseData')) },
            ...errors(400, 401, 403, 404, 409, 413, 422, 429),
          },
        },
        get: {
          operationId: 'listEmails',
          parameters: listParams.map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
          responses: {
            '200': { description: 'newest first', content: data({ type: 'array', items: ref('EmailListItem') }) },
            ...errors(401, 403, 422, 429),
          },
        },
      },
      '/v1/emails/batch': {
        post: {
          operationId: 'sendBatch',
          requestBody: { required: true, content: { 'application/json': { schema: ref('BatchSendRequest') } } },
          responses: {
            '202': { description: 'per-item results', content: data(ref('BatchSendResponseData')) },
            ...errors(400, 401, 403, 413, 422, 429),
          },
        },
      },
      // svc's own, beside the contract's (docs/decisions.md, "Raw sending"): a message its client built.
      '/v1/emails/raw': {
        post: {
          operationId: 'sendRawEmail',
          parameters: [idem],
          requestBody: { required: true, content: { 'application/json': { schema: ref('RawSendRequest') } } },
          responses: {
            '202': { description: 'accepted', content: data(ref('EmailSendResponseData')) },
            '200': { description: 'idempotent replay', content: data(ref('EmailSendResponseData')) },
            ...errors(400, 401, 403, 404, 409, 413, 422, 429),
          },
        },
      },
      '/v1/emails/{email_id}': {
        get: {
          operationId: 'getEmail',
          parameters: [idParam],
          responses: {
            '200': { description: 'the email', content: data(ref('EmailDetail')) },
            ...errors(401, 403, 404, 429),
          },
        },
        // svc's own (docs/decisions.md, "Scheduled sending"): a new time for an email not started.
        patch: {
          operationId: 'rescheduleEmail',
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('RescheduleRequest') } } },
          responses: {
            '200': { description: 'its new time', content: data(ref('ScheduleView')) },
            ...errors(400, 401, 403, 404, 409, 422, 429),
          },
        },
      },
      '/v1/emails/{email_id}/cancel': {
        post: {
          operationId: 'cancelEmail',
          parameters: [idParam],
          responses: {
            '200': { description: 'cancelled: CANCELED, out of the queue', content: data(ref('ScheduleView')) },
            ...errors(401, 403, 404, 409, 429),
          },
        },
      },
      '/v1/emails/{email_id}/events': {
        get: {
          operationId: 'listEmailEvents',
          parameters: [idParam],
          responses: {
            '200': { description: 'oldest first', content: data({ type: 'array', items: ref('EmailEventPublic') }) },
            ...errors(401, 403, 404, 429),
          },
        },
      },
      // svc's own, beside the contract's Public API: what `svc top --server` reads (docs/decisions.md, "svc top").
      '/v1/top': {
        get: {
          operationId: 'getTopSnapshot',
          parameters: Object.entries(
            (json(topFilterSchema, 'input') as { properties: Record<string, object> }).properties,
          ).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
          responses: {
            '200': { description: "the key's project, now", content: data(ref('TopSnapshot')) },
            ...errors(401, 403, 422, 429),
          },
        },
      },
      '/v1/top/emails/{email_id}': {
        get: {
          operationId: 'getTopEmail',
          parameters: [idParam],
          responses: {
            '200': { description: 'its events and why it waits', content: data(ref('TopEmail')) },
            ...errors(401, 403, 404, 429),
          },
        },
      },
      // svc's own, beside the contract's (docs/decisions.md, "Receiving mail"): what the routes received.
      '/v1/received-emails': {
        get: {
          operationId: 'listReceivedEmails',
          parameters: Object.entries(
            (json(receivedListSchema, 'input') as { properties: Record<string, object> }).properties,
          ).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
          responses: {
            '200': { description: 'newest first', content: data({ type: 'array', items: ref('ReceivedEmail') }) },
            ...errors(401, 403, 422, 429),
          },
        },
      },
      '/v1/received-emails/{email_id}': {
        get: {
          operationId: 'getReceivedEmail',
          parameters: [idParam],
          responses: {
            '200': { description: 'the message, as an app wants it', content: data(ref('ReceivedEmailDetail')) },
            ...errors(401, 403, 404, 429),
          },
        },
      },
      '/v1/received-emails/{email_id}/raw': {
        get: {
          operationId: 'getReceivedEmailRaw',
          parameters: [idParam],
          responses: {
            '200': {
              description: 'the message as it arrived',
              content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            },
            ...errors(401, 403, 404, 429),
          },
        },
      },
      ...managementPaths(),
    },
  };
}

/** Paths and operations of the Management API, as the route table documents them. */
function managementPaths(): Record<string, Record<string, object>> {
  const paths: Record<string, Record<string, object>> = {};
  for (const op of documentedOperations().sort((a, b) => a.path.localeCompare(b.path))) {
    const path = op.path.replace(/:([a-z_]+)/g, '{$1}');
    (paths[path] ??= {})[op.method.toLowerCase()] = operationOf(op, path);
  }
  return paths;
}

function operationOf(op: Operation, path: string): object {
  const open = path === '/v1/auth/login' || path === '/v1/auth/refresh' || path.startsWith('/v1/invitations/');
  const params = [...path.matchAll(/\{([a-z_]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: name!.endsWith('_id') ? { type: 'string', format: 'uuid' } : { type: 'string' },
  }));
  const query = op.query
    ? Object.entries((json(op.query, 'input') as { properties?: Record<string, object> }).properties ?? {}).map(
        ([name, schema]) => ({ name, in: 'query', required: false, schema }),
      )
    : [];
  const status = op.status
    ? String(op.status)
    : op.file
      ? '200'
      : op.method === 'DELETE' || !op.response
        ? '204'
        : op.method === 'POST'
          ? '201'
          : '200';
  const ok =
    status === '204'
      ? { description: 'done' }
      : op.file
        ? {
            description: 'the file',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          }
        : {
            description: 'ok',
            content: {
              ...data(json(op.response!)),
              ...(op.csv ? { 'text/csv': { schema: { type: 'string' } } } : {}),
            },
          };
  return {
    operationId: `${op.method.toLowerCase()}${path.replace(/\{[a-z_]+\}/g, 'X').replace(/[^a-zA-Z]+(.)?/g, (_m, c: string = '') => c.toUpperCase())}`,
    summary: op.summary,
    ...(open ? { security: [] } : { security: [{ session: [] }] }),
    ...(params.length || query.length ? { parameters: [...params, ...query] } : {}),
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: json(op.body, 'input') } } } }
      : {}),
    responses: { [status]: ok, ...errors(400, 401, 403, 404, 409, 413, 422, 429) },
  };
}
