import type { FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { buildOpenApi } from './openapi.ts';
import type { Registry } from 'prom-client';

/** Unauthenticated operational endpoints (cli.md) and the OpenAPI document. */
export function registerOpsRoutes(server: FastifyInstance, app: App, metrics: { registry: Registry }): void {
  let openapi: unknown;
  server.get('/healthz', (_req, reply) => reply.send({ data: { status: 'ok' } }));
  server.get('/readyz', async (_req, reply) => {
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
  });
  server.get('/metrics', async (_req, reply) => {
    void reply.header('Content-Type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  server.get('/v1/openapi.json', (_req, reply) => reply.send((openapi ??= buildOpenApi())));
}
