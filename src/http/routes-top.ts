import type { FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { principalOf, requireKey } from './auth.ts';

/**
 * svc top --server: what the data dir's svc top shows, for the key's project, to a key
 * that may read (docs/decisions.md, "svc top").
 */
export function registerTopRoutes(server: FastifyInstance, app: App): void {
  const read = { onRequest: requireKey(app, 'read') };
  server.get('/v1/top', read, async (req, reply) =>
    reply.send({ data: await app.top.snapshot(principalOf(req).project_id, req.query) }),
  );
  server.get<{ Params: { id: string } }>('/v1/top/emails/:id', read, async (req, reply) =>
    reply.send({ data: await app.top.detail(principalOf(req).project_id, req.params.id) }),
  );
}
