import type { LightMyRequestResponse } from 'fastify';
import type { TestEnv } from './harness.ts';

// Signing in over the Management API as the init owner and as members of
// each role, and calling it as one of them.

export type Res = LightMyRequestResponse;
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export const MEMBER_PASSWORD = 'member-password-1';

/** The access token of a login (the login must succeed). */
export async function login(env: TestEnv, email: string, password: string): Promise<string> {
  const res = await env.server.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login of ${email}: ${res.statusCode} ${res.body}`);
  return res.json<{ data: { access_token: string } }>().data.access_token;
}

/**
 * Tokens of the owner (OWNER) and of a new member of the init organization
 * for each of `roles`, signed up as `<role>@example.com`.
 */
export async function signInMembers(
  env: TestEnv,
  roles: readonly ('ADMIN' | 'DEVELOPER' | 'VIEWER')[] = ['ADMIN', 'DEVELOPER', 'VIEWER'],
): Promise<Record<string, string>> {
  const tokens: Record<string, string> = { OWNER: await login(env, 'owner@example.com', 'owner-password-1') };
  for (const role of roles) {
    const email = `${role.toLowerCase()}@example.com`;
    await env.app.accounts.createUser({ email, password: MEMBER_PASSWORD });
    await env.app.accounts.addMember(env.init.organization_id, { email, role });
    tokens[role] = await login(env, email, MEMBER_PASSWORD);
  }
  return tokens;
}

/** Calls the API as `who` (a key of `tokens`); a string payload goes as it is, with `type`. */
export function caller(env: () => TestEnv, tokens: Record<string, string>) {
  return (method: Method, url: string, who: string, payload?: object | string, type?: string): Promise<Res> =>
    env().server.inject({
      method,
      url,
      headers: { authorization: `Bearer ${tokens[who]}`, ...(type ? { 'content-type': type } : {}) },
      ...(payload !== undefined ? { payload } : {}),
    });
}

/** The error code of an error response. */
export const codeOf = (r: Res): string => r.json<{ error: { code: string } }>().error.code;
