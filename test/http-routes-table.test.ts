import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../src/http/server.ts';
import { ROUTES, type Route } from '../src/http/routes.ts';
import { createTestEnv, type TestEnv } from './harness.ts';

// Issue 30: one route table (src/http/routes.ts) is every route svc serves, with who may call it.

/** Every `METHOD path` fastify's router serves, read from its printed tree (each line one segment deeper). */
function served(server: FastifyInstance): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of server.printRoutes().split('\n')) {
    const at = line.indexOf('── ');
    if (at < 0) continue;
    const m = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.slice(at + 3))!;
    stack.length = (at - 1) / 4; // '└── ' at depth 0, then four columns a level
    stack.push(m[1]!);
    for (const method of m[2]?.split(', ') ?? []) routes.push(`${method} ${stack.join('')}`);
  }
  return routes.sort();
}

/** What the table says fastify serves: each route, and HEAD beside each GET. */
const tabled = (routes: readonly Route[]) =>
  routes.flatMap((r) => [`${r.method} ${r.path}`, ...(r.method === 'GET' ? [`HEAD ${r.path}`] : [])]).sort();

/** A URL of the route's path: each parameter a uuid, a wildcard a token. */
const urlOf = (path: string) => path.replace(/:[a-z_]+/g, '00000000-0000-4000-8000-000000000000').replace('*', 'token');

/** Public routes that answer 401 to a request without their own credential (not a key, not a session). */
const NEEDS_OWN_CREDENTIAL = new Set(['POST /v1/auth/refresh']); // the refresh cookie

describe('the route table', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(() => env.close());

  it('is every route fastify serves, and no other', () => {
    expect(served(env.server)).toEqual(tabled(ROUTES));
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  it('tells a route registered outside the table', async () => {
    const server = createHttpServer(env.app);
    server.get('/v1/elsewhere', () => ({ data: null }));
    await server.ready();
    try {
      const extra = served(server).filter((r) => !tabled(ROUTES).includes(r));
      expect(extra).toEqual(['GET /v1/elsewhere', 'HEAD /v1/elsewhere']);
    } finally {
      await server.close();
    }
  });

  it('asks each route for the credential its row names', async () => {
    const apiKey = await env.key();
    const session = (
      await env.app.sessions.login({ email: 'owner@example.com', password: 'owner-password-1' }, '127.0.0.1')
    ).access_token;
    const wrong: string[] = [];
    for (const r of ROUTES) {
      const call = async (token?: string) =>
        (
          await env.server.inject({
            method: r.method,
            url: urlOf(r.path),
            headers: token ? { authorization: `Bearer ${token}` } : {},
          })
        ).statusCode;
      const none = await call();
      // A public route is sent nothing: logout would end the session the next rows use.
      if (r.who.kind === 'public') {
        if (none === 401 && !NEEDS_OWN_CREDENTIAL.has(`${r.method} ${r.path}`)) wrong.push(`${r.method} ${r.path}`);
        continue;
      }
      const [withKey, withSession] = [await call(apiKey), await call(session)];
      // An API key route refuses a session token; a session or member route refuses an API key.
      const ok =
        none === 401 &&
        (r.who.kind === 'key' ? withSession === 401 && withKey !== 401 : withKey === 401 && withSession !== 401);
      if (!ok) wrong.push(`${r.method} ${r.path} (${r.who.kind}): ${none} ${withKey} ${withSession}`);
    }
    expect(wrong).toEqual([]);
  });
});
