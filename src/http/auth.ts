import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { App } from '../app.ts';
import { PLAN_LIMITS } from '../limits/index.ts';
import type { KeyPrincipal, Permission } from '../keys/index.ts';

export type Access = 'send' | 'read';

/** Contract, Authentication 5: who may send and who may read. */
const ALLOWED: Record<Permission, readonly Access[]> = {
  FULL_ACCESS: ['send', 'read'],
  SENDING_ONLY: ['send'],
  READ_ONLY: ['read'],
};

declare module 'fastify' {
  interface FastifyRequest {
    principal?: KeyPrincipal;
  }
}

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

/** The per-key request rate: server setting, else organization override, else the plan's. */
function rateOf(app: App, p: KeyPrincipal): number | null {
  return app.config.rateLimitPerSecond ?? p.rate_limit_per_second ?? PLAN_LIMITS[p.plan].requestsPerSecond;
}

/**
 * A preHandler for Public API routes: 401 for a missing, unknown, revoked or
 * expired key (or a session token), 429 rps_exceeded over the key's rate,
 * 403 when the key's permission does not cover `access` (the key stays valid).
 */
export function requireKey(app: App, access: Access) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const principal = app.keys.authenticate(bearer(req));
    const limit = rateOf(app, principal);
    if (limit !== null) {
      const r = app.rateLimiter.hit(principal.id, limit);
      void reply.headers({
        'X-RateLimit-Limit': String(r.limit),
        'X-RateLimit-Remaining': String(r.remaining),
        'X-RateLimit-Reset': String(r.reset),
      });
      if (!r.allowed) throw new AppError('rps_exceeded', `More than ${limit} requests per second`, { limit }, r.reset);
    }
    if (!ALLOWED[principal.permissions].includes(access)) {
      throw new AppError('forbidden', `This key's permission ${principal.permissions} does not allow this`);
    }
    req.principal = principal;
  };
}

export function principalOf(req: FastifyRequest): KeyPrincipal {
  if (!req.principal) throw new AppError('unauthorized');
  return req.principal;
}
