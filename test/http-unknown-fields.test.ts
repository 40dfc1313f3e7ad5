import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { caller, signInMembers, type Method } from './management-helpers.ts';

// A misspelt field of a management write is refused by name (issue 26, item 11), never dropped.

let env: TestEnv;
afterEach(() => env.close());

const ORG = () => `/v1/organizations/${env.init.organization_id}`;
const P = () => `${ORG()}/projects/${env.init.project_id}`;
const WELCOME = { name: 'Welcome', slug: 'welcome', subject_template: 'Hi', html_template: '<p>Hi</p>' };

describe('a misspelt field of a management write', () => {
  it.each<[string, Method, () => string, object, string, string | undefined]>([
    [
      'template create',
      'POST',
      () => `${P()}/templates`,
      { ...WELCOME, html_templte: '<p>x</p>' },
      'html_templte',
      'html_template',
    ],
    [
      'template update',
      'PATCH',
      () => `${P()}/templates/welcome`,
      { name: 'x', subjet_template: 'y' },
      'subjet_template',
      'subject_template',
    ],
    [
      'domain add',
      'POST',
      () => `${ORG()}/domains`,
      { name: 'example.com', projet_id: 'x' },
      'projet_id',
      'project_id',
    ],
    [
      'webhook create',
      'POST',
      () => `${P()}/webhooks`,
      { url: 'https://example.com/h', events: ['*'], is_actve: true },
      'is_actve',
      undefined,
    ],
    [
      'webhook update',
      'PATCH',
      () => `${P()}/webhooks/00000000-0000-4000-8000-000000000000`,
      { is_actve: false },
      'is_actve',
      'is_active',
    ],
    [
      'key create',
      'POST',
      () => `${P()}/api-keys`,
      { name: 'k', permission: 'READ_ONLY' },
      'permission',
      'permissions',
    ],
    [
      'suppression add',
      'POST',
      () => `${P()}/suppressions`,
      { email: 'a@example.com', reasn: 'MANUAL' },
      'reasn',
      'reason',
    ],
  ])('%s: 422 request_validation_failed naming it', async (_what, method, url, body, field, near) => {
    env = await createTestEnv();
    const tokens = await signInMembers(env, ['ADMIN']);
    const call = caller(() => env, tokens);
    if (method === 'PATCH' && url().includes('/templates/'))
      expect((await call('POST', `${P()}/templates`, 'ADMIN', WELCOME)).statusCode).toBe(201);
    const r = await call(method, url(), 'ADMIN', body);
    expect(r.statusCode).toBe(422);
    const message = `unknown field "${field}"` + (near ? `; did you mean "${near}"?` : '');
    expect(r.json().error).toMatchObject({
      code: 'request_validation_failed',
      details: { fields: expect.arrayContaining([expect.objectContaining({ field, message })]) },
    });
  });
});
