import { create as contentDisposition } from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Actor } from '../audit/index.ts';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { hasRole, type Organization, type Role } from '../accounts/index.ts';
import { sessionOf } from './auth.ts';

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
  /** Answers a file to save (application/octet-stream, a download), not JSON: sendFile. */
  file?: boolean;
  /** The success status when it is not the method's usual one (POST 201, DELETE 204, else 200). */
  status?: 200 | 202;
}

export interface Operation extends OperationDoc {
  method: Method;
  path: string;
}

/** A handler with what /v1/openapi.json says of its route. */
export interface Documented<H> {
  doc: OperationDoc;
  handle: H;
}

export const documented = <H>(doc: OperationDoc, handle: H): Documented<H> => ({ doc, handle });

/** A handler under an organization: it is given the member's context, and returns `data` (or `reply`). */
export type MemberHandler = Documented<(c: OrgContext, app: App) => Promise<unknown>>;

export const memberHandler = (doc: OperationDoc, handle: MemberHandler['handle']): MemberHandler => ({ doc, handle });

/**
 * The fastify handler of a route under an organization: a member of it with at
 * least `min` (403 `forbidden` below it); for anyone else, and for a project of
 * another organization, 404 as if it did not exist. The handler's result is
 * sent as `{data}`: 201 on POST, 204 on DELETE (decisions.md), unless it
 * returns `reply` after answering itself. Runs after requireSession.
 */
export function memberRoute(app: App, method: Method, min: Role, { doc, handle }: MemberHandler) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const params = req.params as Params;
    const { user_id } = sessionOf(req);
    const { role, org } = await app.members.accessTo(user_id, params.organization_id!, params.project_id);
    if (!hasRole(role, min)) throw new AppError('forbidden', `This needs the ${min} role or higher; yours is ${role}`);
    const actor: Actor = { type: 'user', user_id, ip: req.ip };
    const context = { user_id, actor, role, org, params, query: req.query, body: req.body, reply };
    const data = await handle(context, app);
    if (data === reply) return reply;
    if (method === 'DELETE') return reply.code(204).send();
    return reply.code(doc.status ?? (method === 'POST' ? 201 : 200)).send({ data });
  };
}

/**
 * Answers bytes as a download named `name` (an email's attachment). Whatever the sender said the
 * file is, it goes out as application/octet-stream, attachment, nosniff, under a sandboxing CSP:
 * a sender's HTML or SVG never renders, let alone runs, on the dashboard's origin.
 */
export function sendFile(reply: FastifyReply, name: string, body: Buffer): FastifyReply {
  return reply
    .code(200)
    .type('application/octet-stream')
    .header('Content-Disposition', contentDisposition(name))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'; sandbox")
    .send(body);
}

/** Answers a CSV stream as a download named `name` (the `?format=csv` exports); the handler returns this. */
export function sendCsv(reply: FastifyReply, name: string, body: Readable): FastifyReply {
  return reply
    .code(200)
    .type('text/csv; charset=utf-8')
    .header('Content-Disposition', `attachment; filename="${name}"`)
    .send(body);
}
