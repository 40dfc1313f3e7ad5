import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { App } from '../app.ts';

/** What a route's handler may use beside the request: the app, and the server's own parts. */
export interface HttpDeps {
  app: App;
  /** The HTTP server's metrics and the app's, on one page. */
  metrics: Registry;
  /** The OpenAPI document, built once. */
  openapi: () => unknown;
  /** Mark the refresh cookie Secure; only a server on plain loopback HTTP may leave it off (decisions.md). */
  secureCookie: boolean;
}

/** A route's handler: fastify's, with the server's deps. Its auth runs before it, as routes.ts says. */
export type Handler = (req: FastifyRequest, reply: FastifyReply, deps: HttpDeps) => unknown;
