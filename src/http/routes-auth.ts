import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { REFRESH_TTL_MS, type SessionTokens } from '../sessions/index.ts';
import { bearer } from './auth.ts';

const COOKIE = 'svc_refresh';
// Only the auth endpoints ever see the refresh token.
const COOKIE_PATH = '/v1/auth';

export interface AuthRouteOptions {
  /** Mark the cookie Secure; only a server on plain loopback HTTP may leave it off (decisions.md). */
  secureCookie: boolean;
}

/**
 * POST /v1/auth/login, /refresh and /logout. The body carries the access token;
 * the refresh token travels only in the HttpOnly, SameSite=Strict `svc_refresh` cookie.
 */
export function registerAuthRoutes(server: FastifyInstance, app: App, opts: AuthRouteOptions): void {
  const answer = (reply: FastifyReply, t: SessionTokens) => {
    void reply.setCookie(COOKIE, t.refresh_token, {
      httpOnly: true,
      secure: opts.secureCookie,
      sameSite: 'strict',
      path: COOKIE_PATH,
      maxAge: REFRESH_TTL_MS / 1000,
    });
    return { data: { access_token: t.access_token, token_type: t.token_type, expires_in: t.expires_in } };
  };
  const cookieOf = (req: FastifyRequest) => req.cookies[COOKIE];

  server.post('/v1/auth/login', async (req, reply) =>
    answer(reply, await app.sessions.login(req.body as never, req.ip)),
  );

  server.post('/v1/auth/refresh', async (req, reply) => answer(reply, await app.sessions.refresh(cookieOf(req))));

  server.post('/v1/auth/logout', async (req, reply) => {
    await app.sessions.logout({ refresh: cookieOf(req), access: bearer(req) });
    void reply.clearCookie(COOKIE, { path: COOKIE_PATH });
    return reply.code(204).send();
  });
}
