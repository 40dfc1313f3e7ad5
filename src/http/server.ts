import { parse as parseJson } from 'secure-json-parse';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { LIMITS } from '../limits/index.ts';
import { sendError } from './envelope.ts';
import { createHttpMetrics } from './metrics.ts';
import { registerEmailRoutes } from './routes-emails.ts';
import { registerOpsRoutes } from './routes-ops.ts';
import { registerTrackingRoutes } from './routes-tracking.ts';
import { registerAuthRoutes } from './routes-auth.ts';
import { registerManagementRoutes } from './routes-management.ts';
import fastifyCookie from '@fastify/cookie';

/** A client-sent X-Request-ID is kept when it is at most 128 visible ASCII characters (decisions.md). */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** Path patterns of every route with their methods, to tell 405 from 404. */
const ROUTES: [RegExp, string[]][] = [
  [/^\/v1\/emails\/?$/, ['GET', 'POST']],
  [/^\/v1\/emails\/batch\/?$/, ['POST']],
  [/^\/v1\/emails\/[^/]+\/?$/, ['GET']],
  [/^\/v1\/emails\/[^/]+\/events\/?$/, ['GET']],
  [/^\/(healthz|readyz|metrics|v1\/openapi\.json)$/, ['GET']],
  [/^\/t\/[co]\/.+$/, ['GET']],
  [/^\/v1\/auth\/(login|refresh|logout)\/?$/, ['POST']],
  [/^\/v1\/organizations\/?$/, ['GET', 'POST']],
  [/^\/v1\/organizations\/[^/]+\/?$/, ['GET', 'PATCH', 'DELETE']],
  [/^\/v1\/organizations\/[^/]+\/projects\/?$/, ['GET', 'POST']],
  [/^\/v1\/organizations\/[^/]+\/projects\/[^/]+\/?$/, ['GET', 'PATCH', 'DELETE']],
  [/^\/v1\/organizations\/[^/]+\/(members|domains)\/?$/, ['GET']],
  [/^\/v1\/organizations\/[^/]+\/domains\/[^/]+\/?$/, ['GET']],
  [/^\/v1\/organizations\/[^/]+\/members\/[^/]+\/?$/, ['PATCH', 'DELETE']],
  [/^\/v1\/organizations\/[^/]+\/invitations\/?$/, ['POST']],
  [/^\/v1\/invitations\/[^/]+\/accept\/?$/, ['POST']],
  [/^\/v1\/organizations\/[^/]+\/audit-logs\/?$/, ['GET']],
  [/^\/v1\/organizations\/[^/]+\/projects\/[^/]+\/api-keys\/?$/, ['GET', 'POST']],
  [/^\/v1\/organizations\/[^/]+\/projects\/[^/]+\/api-keys\/[^/]+\/?$/, ['DELETE']],
  [/^\/v1\/organizations\/[^/]+\/projects\/[^/]+\/(templates|suppressions)\/?$/, ['GET']],
  [/^\/v1\/organizations\/[^/]+\/projects\/[^/]+\/templates\/[^/]+\/?$/, ['GET']],
];

export interface HttpServerOptions {
  https?: { cert: Buffer; key: Buffer };
}

/**
 * Builds the HTTP server over an App without listening, so tests can inject
 * requests or listen on port 0. Every response carries X-Request-ID; every
 * error is the contract's envelope.
 */
export function createHttpServer(app: App, opts: HttpServerOptions = {}): FastifyInstance {
  const server = Fastify({
    loggerInstance: app.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: LIMITS.httpBodyBytes,
    genReqId: (req) => {
      const id = req.headers['x-request-id'];
      return typeof id === 'string' && CLIENT_REQUEST_ID.test(id) ? id : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    ...(opts.https ? { https: opts.https } : {}),
  }) as unknown as FastifyInstance;
  const metrics = createHttpMetrics();

  // Bodies are JSON whatever Content-Type a client sets (curl -d sends form encoding).
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    try {
      // A `__proto__` key would vanish between JSON.parse and the schemas (a header
      // named so was silently dropped), so it is refused with the reason instead.
      done(null, parseJson(body, null, { protoAction: 'error', constructorAction: 'ignore' }));
    } catch (e) {
      const message = /prototype property/.test((e as Error).message)
        ? 'The body has a "__proto__" key, which is not accepted anywhere in a request'
        : `The body is not valid JSON: ${(e as Error).message}`;
      done(new AppError('invalid_json', message), undefined);
    }
  });
  server.addHook('onRequest', async (req, reply) => {
    void reply.header('X-Request-ID', req.id);
  });
  server.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.observe(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    req.log.debug({ method: req.method, url: req.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
  });
  server.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  server.setNotFoundHandler((req, reply) => {
    const err = notFoundOrMethod(req);
    const allow = err.details?.allow;
    if (Array.isArray(allow)) void reply.header('Allow', allow.join(', '));
    return sendError(req, reply, err);
  });

  void server.register(fastifyCookie);
  registerOpsRoutes(server, app, metrics);
  registerEmailRoutes(server, app);
  registerTrackingRoutes(server, app);
  registerAuthRoutes(server, app, { secureCookie: Boolean(opts.https) || !isLoopback(app.config.httpHost) });
  registerManagementRoutes(server, app);
  return server;
}

function notFoundOrMethod(req: FastifyRequest): AppError {
  const path = req.url.split('?')[0] ?? '';
  const match = ROUTES.find(([re]) => re.test(path));
  if (match && !match[1].includes(req.method)) {
    return new AppError('method_not_allowed', `${req.method} is not allowed on ${path}`, { allow: match[1] });
  }
  return new AppError('not_found', `No route ${req.method} ${path}`);
}

/** A plain-HTTP server may leave the cookie's Secure flag off only where no one else can listen. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
