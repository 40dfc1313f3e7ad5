import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { REFRESH_TTL_MS, type SessionTokens } from '../sessions/index.ts';
import { loginSchema } from '../sessions/schema.ts';
import { bearer } from './auth.ts';
import type { Handler } from './handler.ts';
import * as out from './management-schemas.ts';
import { documented } from './org-route.ts';

/*
 * POST /v1/auth/login, /refresh and /logout. The body carries the access token;
 * the refresh token travels only in the HttpOnly, SameSite=Strict `svc_refresh` cookie.
 */

const COOKIE = 'svc_refresh';
/** Only the auth endpoints ever see the refresh token: the cookie plugin runs on these routes alone. */
export const COOKIE_PATH = '/v1/auth';

function answer(reply: FastifyReply, t: SessionTokens, secureCookie: boolean) {
  void reply.setCookie(COOKIE, t.refresh_token, {
    httpOnly: true,
    secure: secureCookie,
    sameSite: 'strict',
    path: COOKIE_PATH,
    maxAge: REFRESH_TTL_MS / 1000,
  });
  return { data: { access_token: t.access_token, token_type: t.token_type, expires_in: t.expires_in } };
}
const cookieOf = (req: FastifyRequest) => req.cookies[COOKIE];

/**
 * CSRF: the refresh cookie is SameSite=Strict, so another site's page cannot send it; and a
 * browser that says the request came from another site (Sec-Fetch-Site: cross-site or
 * same-site, a sibling host) is refused before the cookie is read, which also stops a page
 * elsewhere signing a visitor in to its own account. The header is the browser's, not the
 * client's, and a reverse proxy leaves it as it is; clients other than browsers send none.
 */
function refuseCrossSite(req: FastifyRequest): void {
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site')
    throw new AppError('forbidden', 'Cross-site requests to /v1/auth are refused');
}

export const login = documented<Handler>(
  { summary: 'Sign in', body: loginSchema, response: out.tokensOut, status: 200 },
  async (req, reply, { app, secureCookie }) => {
    refuseCrossSite(req);
    return answer(reply, await app.sessions.login(req.body as never, req.ip), secureCookie);
  },
);

export const refresh = documented<Handler>(
  { summary: 'Rotate the refresh cookie', response: out.tokensOut, status: 200 },
  async (req, reply, { app, secureCookie }) => {
    refuseCrossSite(req);
    return answer(reply, await app.sessions.refresh(cookieOf(req)), secureCookie);
  },
);

export const logout = documented<Handler>({ summary: 'Sign out' }, async (req, reply, { app }) => {
  refuseCrossSite(req);
  await app.sessions.logout({ refresh: cookieOf(req), access: bearer(req) });
  void reply.clearCookie(COOKIE, { path: COOKIE_PATH });
  return reply.code(204).send();
});
