import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { caller, codeOf, signInMembers } from './management-helpers.ts';

// Templates over the Management API (contract, "Endpoints": …/templates), each write audited.

let env: TestEnv;
afterEach(() => env.close());
let tokens: Record<string, string> = {};

async function setup(): Promise<void> {
  env = await createTestEnv();
  tokens = await signInMembers(env, ['DEVELOPER', 'VIEWER']);
}

const T = () => `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}/templates`;
const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => env, tokens)(...args);
const WELCOME = { name: 'Welcome', slug: 'welcome', subject_template: 'Hi {{ name }}', html_template: '<p>Hi</p>' };

describe('templates over the Management API', () => {
  it('a DEVELOPER creates (201), updates (version + 1) and deletes (204); a VIEWER only reads', async () => {
    await setup();
    expect((await call('POST', T(), 'VIEWER', WELCOME)).statusCode).toBe(403);
    const created = await call('POST', T(), 'DEVELOPER', WELCOME);
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    expect(created.json().data).toMatchObject({ slug: 'welcome', version: 1 });
    const updated = await call('PATCH', `${T()}/${id}`, 'DEVELOPER', { subject_template: 'Welcome, {{ name }}' });
    expect(updated.json().data).toMatchObject({ subject_template: 'Welcome, {{ name }}', version: 2 });
    expect((await call('GET', `${T()}/welcome`, 'VIEWER')).json().data.version).toBe(2);
    expect((await call('PATCH', `${T()}/${id}`, 'VIEWER', { name: 'x' })).statusCode).toBe(403);
    expect((await call('DELETE', `${T()}/${id}`, 'VIEWER')).statusCode).toBe(403);
    expect((await call('DELETE', `${T()}/${id}`, 'DEVELOPER')).statusCode).toBe(204);
    expect((await call('GET', `${T()}/${id}`, 'VIEWER')).statusCode).toBe(404);
    const actions = await env.query(
      `SELECT action FROM audit_logs WHERE target_type = 'template' ORDER BY ${env.auditOrder}`,
    );
    expect(actions).toEqual([
      { action: 'template.create' },
      { action: 'template.update' },
      { action: 'template.delete' },
    ]);
  });

  it('refuses a duplicate slug (409), a missing body (422) and a template that does not compile (422)', async () => {
    await setup();
    expect((await call('POST', T(), 'DEVELOPER', WELCOME)).statusCode).toBe(201);
    const dup = await call('POST', T(), 'DEVELOPER', WELCOME);
    expect([dup.statusCode, codeOf(dup)]).toEqual([409, 'conflict']);
    const noBody = await call('POST', T(), 'DEVELOPER', { ...WELCOME, slug: 'other', html_template: undefined });
    expect([noBody.statusCode, codeOf(noBody)]).toEqual([422, 'request_validation_failed']);
    const broken = await call('POST', T(), 'DEVELOPER', { ...WELCOME, slug: 'broken', html_template: '{% if %}' });
    expect([broken.statusCode, codeOf(broken)]).toEqual([422, 'template_render_error']);
    const unknown = await call('PATCH', `${T()}/no-such`, 'DEVELOPER', { name: 'x' });
    expect(unknown.statusCode).toBe(404);
    expect((await env.query("SELECT count(*) AS n FROM audit_logs WHERE target_type = 'template'"))[0]).toEqual({
      n: 1,
    });
  });
});
