import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Actor } from '../audit/index.ts';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { hasRole, minRoleOf, type Organization, type Role } from '../accounts/index.ts';
import { requireSession, sessionOf } from './auth.ts';

export const ORG = '/v1/organizations/:organization_id';
export const PROJECT = `${ORG}/projects/:project_id`;

type Params = Record<string, string>;
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What an organization route knows once access is granted. */
export interface OrgContext {
  user_id: string;
  /** Who writes, for the audit log: the user, from the client's address. */
  actor: Actor;
  role: Role;
  org: Organization;
  params: Params;
  query: unknown;
  body: unknown;
  /** For a handler that answers itself (a CSV stream): it returns `reply`. */
  reply: FastifyReply;
}

/**
 * What /v1/openapi.json says of a route: the zod schemas its handler validates
 * the request with, and the one its `data` answers with (a test checks every
 * management response against the document).
 */
export interface OperationDoc {
  summary: string;
  body?: z.ZodType;
  query?: z.ZodType;
  /** The schema of `data`; omitted for a DELETE (204, no body). */
  response?: z.ZodType;
  /** Also answers `?format=csv` with a streamed text/csv body. */
  csv?: boolean;
  /** The body is a CSV file (Content-Type text/csv), streamed to the handler. */
  csvBody?: boolean;
  /** The success status when it is not the method's usual one (POST 201, DELETE 204, else 200). */
  status?: 200 | 202;
}

export interface Operation extends OperationDoc {
  method: Method;
  path: string;
}

/** Every management operation registered, for the OpenAPI document. */
export const operations = new Map<string, Operation>();

/** Registers one route under an organization; see createOrgRouter. */
export type OrgRoute = (
  method: Method,
  path: string,
  doc: OperationDoc,
  handler: (c: OrgContext) => Promise<unknown>,
) => void;

/** Records a management route outside an organization (login, invitations) for the OpenAPI document. */
export function documentOperation(method: Method, path: string, doc: OperationDoc): void {
  operations.set(`${method} ${path}`, { method, path, ...doc });
}

/**
 * A route under an organization: a member of it with at least the role the
 * role table names (403 `forbidden` below it); for anyone else, and for a
 * project of another organization, 404 as if it did not exist. The handler's
 * result is sent as `{data}`: 201 on POST, 204 on DELETE (decisions.md),
 * unless it returns `reply` after answering itself.
 */
export function createOrgRouter(server: FastifyInstance, app: App): OrgRoute {
  const preHandler = requireSession(app);
  return (method, path, doc, handler) => {
    const min = minRoleOf(method, path);
    if (!min) throw new Error(`no role for ${method} ${path} in the role table (src/accounts/roles.ts)`);
    documentOperation(method, path, doc);
    server.route({
      method,
      url: path,
      preHandler,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const params = req.params as Params;
        const { user_id } = sessionOf(req);
        const { role, org } = await app.members.accessTo(user_id, params.organization_id!, params.project_id);
        if (!hasRole(role, min))
          throw new AppError('forbidden', `This needs the ${min} role or higher; yours is ${role}`);
        const actor: Actor = { type: 'user', user_id, ip: req.ip };
        const data = await handler({ user_id, actor, role, org, params, query: req.query, body: req.body, reply });
        if (data === reply) return reply;
        if (method === 'DELETE') return reply.code(204).send();
        return reply.code(doc.status ?? (method === 'POST' ? 201 : 200)).send({ data });
      },
    });
  };
}

/** Answers a CSV stream as a download named `name` (the `?format=csv` exports); the handler returns this. */
export function sendCsv(reply: FastifyReply, name: string, body: Readable): FastifyReply {
  return reply
    .code(200)
    .type('text/csv; charset=utf-8')
    .header('Content-Disposition', `attachment; filename="${name}"`)
    .send(body);
}
