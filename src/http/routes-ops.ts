import type { Handler } from './handler.ts';

/** Unauthenticated operational endpoints (cli.md) and the OpenAPI document. */

export const getHealth: Handler = (_req, reply) => reply.send({ data: { status: 'ok' } });

export const getReadiness: Handler = async (_req, reply, { app }) => {
  // Which store answered (or did not): a load balancer's check and its operator see the same.
  const ok = await app.ready();
  // A full disk is said as such: the operator's first question (docs/operations.md).
  const reason = !ok && app.storage().full ? { reason: 'storage_full' } : {};
  // svc doctor's latest report is detail only: readiness stays the store's (cli.md).
  const report = app.doctorReport();
  const doctor = report ? { doctor: report } : {};
  return reply
    .code(ok ? 200 : 503)
    .send({ data: { status: ok ? 'ready' : 'not_ready', store: app.storeKind, ...reason, ...doctor } });
};

export const getMetrics: Handler = async (_req, reply, { metrics }) => {
  void reply.header('Content-Type', metrics.contentType);
  return metrics.metrics();
};

export const getOpenApi: Handler = (_req, reply, { openapi }) => reply.send(openapi());
