import type { FastifyRequest } from 'fastify';
import { principalOf, runKept } from './auth.ts';
import type { Handler } from './handler.ts';

/** The Public API: five endpoints, each a thin call into the emails service. */

const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

const idempotencyKeyOf = (req: FastifyRequest) => {
  const key = req.headers['idempotency-key'];
  return Array.isArray(key) ? key.join(',') : key;
};

export const sendEmail: Handler = async (req, reply, { app }) => {
  const key = idempotencyKeyOf(req);
  // Its key may be kept in memory (routes.ts, SEND_KEPT): the accept confirms it, or it runs again.
  const { replay, response } = await runKept(app, req, reply, (principal, check) =>
    app.emails.send(principal, req.body, key, check),
  );
  if (replay) void reply.header('Idempotent-Replayed', 'true');
  return reply.code(replay ? 200 : 202).send({ data: response });
};

/** svc's own, beside the contract's: a message its client built, sent as written (issue 33). */
export const sendRawEmail: Handler = async (req, reply, { app }) => {
  const { replay, response } = await app.emails.sendRaw(principalOf(req), req.body, idempotencyKeyOf(req));
  if (replay) void reply.header('Idempotent-Replayed', 'true');
  return reply.code(replay ? 200 : 202).send({ data: response });
};

export const sendBatch: Handler = async (req, reply, { app }) => {
  const data = await app.emails.sendBatch(principalOf(req), req.body);
  return reply.code(202).send({ data });
};

export const listEmails: Handler = async (req, _reply, { app }) => ({
  data: await app.emails.list(principalOf(req).project_id, req.query),
});

export const getEmail: Handler = async (req, _reply, { app }) => ({
  data: await app.emails.get(principalOf(req).project_id, idOf(req)),
});

/** svc's own (decisions.md, "Scheduled sending"): a scheduled email's new time, while it has not started. */
export const rescheduleEmail: Handler = async (req, _reply, { app }) => ({
  data: await app.emails.reschedule(principalOf(req).project_id, idOf(req), req.body),
});

/** svc's own: a scheduled email taken out of the queue, while it has not started. */
export const cancelEmail: Handler = async (req, _reply, { app }) => ({
  data: await app.emails.cancel(principalOf(req).project_id, idOf(req)),
});

export const listEmailEvents: Handler = async (req, _reply, { app }) => ({
  data: await app.emails.events(principalOf(req).project_id, idOf(req)),
});
