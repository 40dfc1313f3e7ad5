import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { App } from '../app.ts';
import { requestRateOf } from '../limits/index.ts';
import { assertAllowed, type Access, type KeyPrincipal } from '../keys/index.ts';
import type { SessionPrincipal } from '../sessions/index.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: KeyPrincipal;
    session?: SessionPrincipal;
  }
}

export function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

/**
 * A preHandler for Public API routes: 401 for a missing, unknown, revoked or
 * expired key (or a session token), 429 rps_exceeded over the key's rate with
 * the X-RateLimit-* headers, 403 when the key's permission does not cover `access`.
 */
export function requireKey(app: App, access: Access) {
  // The callback form, not async: this runs on every Public API request (see server.ts).
  return (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    authorize(req, reply).then(
      () => done(),
      (e: unknown) => done(e as Error),
    );
  };

  async function authorize(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await app.keys.authenticate(bearer(req));
    const limit = requestRateOf(principal.plan, principal.rate_limit_per_second, app.config.rateLimitPerSecond);
    if (limit !== null) {
      const r = await app.rateLimiter.hit(principal.id, limit);
      void reply.headers({
        'X-RateLimit-Limit': String(r.limit),
        'X-RateLimit-Remaining': String(r.remaining),
        'X-RateLimit-Reset': String(r.reset),
      });
      if (!r.allowed)
        throw new AppError(
          'rps_exceeded',
          `More than ${limit} ${limit === 1 ? 'request' : 'requests'} per second`,
          { limit },
          r.reset,
        );
    }
    assertAllowed(principal.permissions, access);
    req.principal = principal;
  }
}

export function principalOf(req: FastifyRequest): KeyPrincipal {
  if (!req.principal) throw new AppError('unauthorized');
  return req.principal;
}

/**
 * A preHandler for Management API routes: a session token from login, never an
 * API key (contract, "Authentication" 7): anything else is 401 unauthorized.
 */
export function requireSession(app: App) {
  return async (req: FastifyRequest): Promise<void> => {
    req.session = await app.sessions.authenticate(bearer(req));
  };
}

export function sessionOf(req: FastifyRequest): SessionPrincipal {
  if (!req.session) throw new AppError('unauthorized');
  return req.session;
}
