import { parse as parseJson } from 'secure-json-parse';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { LIMITS } from '../limits/index.ts';
import { sendError } from './envelope.ts';
import { Registry } from 'prom-client';
import { createHttpMetrics, registerWebhookMetrics } from './metrics.ts';
import { buildOpenApi } from './openapi.ts';
import { registerRoutes } from './routes.ts';
import { Transform } from 'node:stream';
import { serverBusy } from '../lib/byte-budget.ts';

/**
 * How long a request may take to arrive whole, headers and body: a stalled body is cut
 * (408) and the bytes it held in the budget given back. fastify's default is none.
 */
const REQUEST_TIMEOUT_MS = 120_000;

/** A client-sent X-Request-ID is kept when it is at most 128 visible ASCII characters (decisions.md). */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export interface HttpServerOptions {
  https?: { cert: Buffer; key: Buffer };
  /** How long a request may take to arrive whole (default 120 s). */
  requestTimeoutMs?: number;
}

/**
 * Builds the HTTP server over an App without listening, so tests can inject
 * requests or listen on port 0. Every response carries X-Request-ID; every
 * error is the contract's envelope.
 */
export function createHttpServer(app: App, opts: HttpServerOptions = {}): FastifyInstance {
  const requestTimeout = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = Fastify({
    requestTimeout,
    // Node looks for timed-out requests every 30 s by default: a shorter timeout is looked at as often.
    http: {
      connectionsCheckingInterval: Math.min(30_000, Math.max(10, requestTimeout / 4)),
      headersTimeout: Math.min(60_000, requestTimeout),
    },
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
  registerWebhookMetrics(metrics.registry, {
    pending: () => app.webhookDispatcher().pending(),
    autoDisabled: () => app.webhookDispatcher().autoDisabled(),
    stats: () => app.webhookDispatcher().stats,
  });

  acceptJsonBodies(server);
  // Hooks on every request take fastify's callback form: an async hook costs a promise and a
  // microtask per request (docs/performance.md, "Hot paths").
  server.addHook('onRequest', (req, reply, done) => {
    void reply.header('X-Request-ID', req.id);
    done();
  });
  countBodyBytes(server, app);
  server.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.observe(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    req.log.debug({ method: req.method, url: req.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
    done();
  });
  server.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  answerUnmatched(server);

  let openapi: unknown;
  registerRoutes(server, {
    app,
    // The HTTP server's own metrics and the app's (delivery, store, relay), on one page.
    metrics: Registry.merge([metrics.registry, app.metrics.registry]),
    openapi: () => (openapi ??= buildOpenApi()),
    secureCookie: Boolean(opts.https) || !isLoopback(app.config.httpHost),
  });
  return server;
}

/** Bodies are JSON whatever Content-Type a client sets (curl -d sends form encoding). */
function acceptJsonBodies(server: FastifyInstance): void {
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    // A one-click unsubscribe is form-encoded by every mail provider (RFC 8058); its route reads no body.
    if (req.url.startsWith('/u/')) return done(null, body);
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
}

/** A body declared this long or shorter is held at its declared length (countBodyBytes). */
const SMALL_BODY_BYTES = 16 * 1024;

/**
 * A body's bytes are counted as they arrive, not as declared (a client declaring 40 MiB
 * and sending nothing holds nothing), and given back when the request ends; a small one is
 * held at its declared length.
 */
function countBodyBytes(server: FastifyInstance, app: App): void {
  server.addHook('preParsing', (req, reply, payload, done) => {
    const { 'content-length': length, 'transfer-encoding': chunked } = req.headers;
    if ((length === undefined || length === '0') && chunked === undefined) return done(null, payload);
    // A small body of a request whose API key passed (routes.ts: a key is checked on request,
    // before this) is held at its declared length from the start: Node reads no more than that
    // as its body, and a stream to count a few hundred bytes cost ~5 % of what a send
    // allocates (docs/performance.md). Such a client that declares it and sends nothing holds
    // at most SMALL_BODY_BYTES, as an SMTP client holds its declared SIZE; one without a key
    // holds nothing until its bytes come. A client gone while its key was checked holds nothing:
    // the close that would give the bytes back has already been.
    const declared = chunked === undefined && req.principal !== undefined ? Number(length) : NaN;
    if (declared <= SMALL_BODY_BYTES) {
      if (req.raw.socket?.destroyed !== false) return done(null, payload);
      const hold = app.inFlight.take(declared);
      if (!hold) return done(serverBusy(), undefined);
      reply.raw.once('close', () => hold.release());
      return done(null, payload);
    }
    const hold = app.inFlight.take(0)!; // a hold of 0 is never refused
    // A request can be answered before its body has all come (413 on a declared length): the
    // rest still flows through here, and an error then would have no reader but the process.
    let answered = false;
    reply.raw.once('close', () => {
      answered = true;
      hold.release();
    });
    let received = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, next) {
        if (answered) return next();
        received += chunk.length;
        next(hold.cover(received) ? null : serverBusy(), chunk);
      },
    });
    // fastify's reader answers a refusal while it reads; with no reader (a 413 decided on the
    // declared length) the refusal is dropped here instead of throwing out of the pipe.
    counted.on('error', () => {});
    done(null, payload.pipe(counted));
  });
}

/** A request no route matches: 405 `method_not_allowed` with Allow where the path has other methods, else 404. */
function answerUnmatched(server: FastifyInstance): void {
  const routes = createPathIndex();
  server.addHook('onRoute', (r) => routes.add(r.url, r.method));
  server.setNotFoundHandler((req, reply) => {
    const err = routes.notFoundOrMethod(req);
    const allow = err.details?.allow;
    if (Array.isArray(allow)) void reply.header('Allow', allow.join(', '));
    return sendError(req, reply, err);
  });
}

/**
 * Every route's path pattern with its methods, filled as routes are registered,
 * to tell 405 `method_not_allowed` (with Allow) from 404. Where several
 * patterns match, the one with the fewest parameters speaks, as the router
 * prefers static segments (`/v1/emails/batch` over `/v1/emails/:email_id`).
 */
function createPathIndex() {
  const table = new Map<string, { re: RegExp; params: number; methods: Set<string> }>();
  return {
    add(url: string, method: string | string[]): void {
      let entry = table.get(url);
      if (!entry) {
        const source = url
          .split('/')
          .map((seg) =>
            seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/');
        entry = { re: new RegExp(`^${source}/?$`), params: (url.match(/[:*]/g) ?? []).length, methods: new Set() };
        table.set(url, entry);
      }
      // HEAD is answered for every GET route; Allow names what a client would call.
      for (const m of [method].flat()) if (m !== 'HEAD') entry.methods.add(m);
    },
    notFoundOrMethod(req: FastifyRequest): AppError {
      const path = req.url.split('?')[0] ?? '';
      const matches = [...table.values()].filter((e) => e.re.test(path)).sort((a, b) => a.params - b.params);
      const best = matches[0];
      if (best && !best.methods.has(req.method)) {
        const allow = [...best.methods].sort();
        return new AppError('method_not_allowed', `${req.method} is not allowed on ${path}`, { allow });
      }
      return new AppError('not_found', `No route ${req.method} ${path}`);
    },
  };
}

/** A plain-HTTP server may leave the cookie's Secure flag off only where no one else can listen. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
