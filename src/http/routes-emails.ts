import type { FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { principalOf, requireKey } from './auth.ts';

/** The Public API: five endpoints, each a thin call into the emails service. */
export function registerEmailRoutes(server: FastifyInstance, app: App): void {
  const send = { onRequest: requireKey(app, 'send') };
  const read = { onRequest: requireKey(app, 'read') };

  server.post('/v1/emails', send, async (req, reply) => {
    const key = req.headers['idempotency-key'];
    const idem = Array.isArray(key) ? key.join(',') : key;
    const { replay, response } = await app.emails.send(principalOf(req), req.body, idem);
    if (replay) void reply.header('Idempotent-Replayed', 'true');
    return reply.code(replay ? 200 : 202).send({ data: response });
  });

  server.post('/v1/emails/batch', send, async (req, reply) => {
    const data = await app.emails.sendBatch(principalOf(req), req.body);
    return reply.code(202).send({ data });
  });

  server.get('/v1/emails', read, async (req) => ({
    data: await app.emails.list(principalOf(req).project_id, req.query),
  }));

  server.get<{ Params: { id: string } }>('/v1/emails/:id', read, async (req) => ({
    data: await app.emails.get(principalOf(req).project_id, req.params.id),
  }));

  server.get<{ Params: { id: string } }>('/v1/emails/:id/events', read, async (req) => ({
    data: await app.emails.events(principalOf(req).project_id, req.params.id),
  }));
}
