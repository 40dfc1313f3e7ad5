import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { App } from '../app.ts';
import { requestRateOf } from '../limits/index.ts';
import {
  allows,
  assertAllowed,
  AuthEpochMoved,
  confirmed,
  type Access,
  type AuthCheck,
  type KeyPrincipal,
} from '../keys/index.ts';
import { sendError } from './envelope.ts';
import type { SessionPrincipal } from '../sessions/index.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: KeyPrincipal;
    /** A kept key's auth epoch, until it is confirmed, and what the route asked of the key (requireKey's `kept`). */
    kept?: { check: AuthCheck; access: Access } | undefined;
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
 *
 * With `kept`, a key the store keeps in memory is taken from there without reading the auth
 * epoch (keys/epoch.ts): the request's `kept` then holds the epoch, and the route confirms
 * it before its answer takes effect (`runKept`, `keptErrorHandler`). A refusal here is given
 * only once the epoch is confirmed, or on a fresh lookup when it moved.
 */
export function requireKey(app: App, access: Access, opts: { kept?: boolean } = {}) {
  // The callback form, not async: this runs on every Public API request (see server.ts).
  return (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    authorize(req, reply).then(
      () => done(),
      (e: unknown) => done(e as Error),
    );
  };

  async function authorize(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = bearer(req);
    let { principal, check } = opts.kept
      ? await app.keys.authenticateKept(token)
      : { principal: await app.keys.authenticate(token), check: null };
    const limit = requestRateOf(principal.plan, principal.rate_limit_per_second, app.config.rateLimitPerSecond);
    // The rate is counted once a request, against the limit of the key as first found: a limit
    // changed at that moment applies from the key's next request (decisions.md).
    const r = limit === null ? null : await app.rateLimiter.hit(principal.id, limit);
    if (check && (r?.allowed === false || !allows(principal.permissions, access)) && !confirmed(check)) {
      // Memory would refuse, and the key changed since: the refusal is decided on fresh data.
      principal = await app.keys.authenticate(token);
      check = null;
    }
    if (r) {
      void reply.headers({
        'X-RateLimit-Limit': String(r.limit),
        'X-RateLimit-Remaining': String(r.remaining),
        'X-RateLimit-Reset': String(r.reset),
      });
      if (!r.allowed)
        throw new AppError(
          'rps_exceeded',
          `More than ${r.limit} ${r.limit === 1 ? 'request' : 'requests'} per second`,
          { limit: r.limit },
          r.reset,
        );
    }
    assertAllowed(principal.permissions, access);
    req.principal = principal;
    if (check) req.kept = { check, access };
  }
}

/**
 * Authenticates and authorizes the request again on fresh data (its rate already counted):
 * for a kept key whose auth epoch moved. Throws the 401 or 403 fresh data gives; a 401 without
 * the X-RateLimit-* headers, as a key refused before its rate is counted has none.
 */
async function reauthorize(app: App, req: FastifyRequest, reply: FastifyReply, access: Access): Promise<void> {
  req.kept = undefined;
  try {
    const principal = await app.keys.authenticate(bearer(req));
    assertAllowed(principal.permissions, access);
    req.principal = principal;
  } catch (e) {
    if (e instanceof AppError && e.code === 'unauthorized') {
      for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) reply.removeHeader(h);
    }
    throw e;
  }
}

/**
 * Runs a handler's work on the request's principal. When that principal is a kept key whose
 * epoch the work did not confirm (an answer that wrote nothing: a refusal, a replay) and the
 * epoch moved, or the work found it moved (AuthEpochMoved, before writing), the request is
 * authorized again on fresh data and the work runs once more: answers such as
 * `dpa_not_signed` come from the principal.
 */
export async function runKept<T>(
  app: App,
  req: FastifyRequest,
  reply: FastifyReply,
  work: (principal: KeyPrincipal, check: AuthCheck | undefined) => Promise<T>,
): Promise<T> {
  const kept = req.kept;
  if (!kept) return work(principalOf(req), undefined);
  try {
    const out = await work(principalOf(req), kept.check);
    if (confirmed(kept.check)) return out;
  } catch (e) {
    if (!(e instanceof AuthEpochMoved) && confirmed(kept.check)) throw e;
  }
  await reauthorize(app, req, reply, kept.access);
  return work(principalOf(req), undefined);
}

/**
 * The error handler of a route with kept keys: an error met before its handler ran (the body's
 * 400, 413 or 503) is sent only once the key's epoch is confirmed; when it moved, the 401 or 403
 * fresh data gives goes first.
 */
export function keptErrorHandler(app: App) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply): void => {
    const kept = req.kept;
    if (!kept || confirmed(kept.check)) return void sendError(req, reply, err);
    reauthorize(app, req, reply, kept.access).then(
      () => sendError(req, reply, err),
      (e: unknown) => sendError(req, reply, e),
    );
  };
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
