import type { FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { requireSession, sessionOf } from './auth.ts';

/** The Management API (session token). */
export function registerManagementRoutes(server: FastifyInstance, app: App): void {
  const session = { preHandler: requireSession(app) };

  // The organizations the signed-in user belongs to, with the user's role in each.
  server.get('/v1/organizations', session, async (req) => ({
    data: await app.accounts.listOrgsOfUser(sessionOf(req).user_id),
  }));
}
