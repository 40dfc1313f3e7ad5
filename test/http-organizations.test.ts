import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { caller, codeOf, signInMembers } from './management-helpers.ts';

// Organizations and projects over the Management API, each write with its audit row.

let env: TestEnv;
afterEach(() => env.close());

let tokens: Record<string, string> = {};

async function setup(): Promise<void> {
  env = await createTestEnv();
  tokens = await signInMembers(env, ['ADMIN', 'DEVELOPER']);
}

const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => env, tokens)(...args);
const O = () => `/v1/organizations/${env.init.organization_id}`;
const audit = () =>
  env.query<{
    action: string;
    actor_type: string;
    actor_name: string | null;
    before: string | null;
    after: string | null;
  }>(`SELECT action, actor_type, actor_name, before, after FROM audit_logs ORDER BY ${env.auditOrder}`);

describe('organizations', () => {
  it('any signed-in user starts one and owns it', async () => {
    await setup();
    const res = await call('POST', '/v1/organizations', 'DEVELOPER', { name: 'Side project' });
    expect(res.statusCode).toBe(201);
    const org = res.json().data;
    expect(org).toMatchObject({ name: 'Side project', plan: 'FREE', role: 'OWNER' });
    const mine = (await call('GET', '/v1/organizations', 'DEVELOPER')).json().data as { name: string; role: string }[];
    expect(mine.map((o) => [o.name, o.role])).toEqual([
      ['Acme', 'DEVELOPER'],
      ['Side project', 'OWNER'],
    ]);
    expect((await audit()).at(-1)).toMatchObject({
      action: 'organization.create',
      actor_name: 'developer@example.com',
    });
    const dup = await call('POST', '/v1/organizations', 'OWNER', { name: 'Side project' });
    expect([dup.statusCode, codeOf(dup)]).toEqual([409, 'conflict']);
    const bad = await call('POST', '/v1/organizations', 'OWNER', { name: 'X', plan: 'UNLIMITED' });
    expect([bad.statusCode, codeOf(bad)]).toEqual([422, 'request_validation_failed']);
  });

  it('only its OWNER renames it; the change is audited before and after', async () => {
    await setup();
    expect((await call('PATCH', O(), 'ADMIN', { name: 'Acme Inc' })).statusCode).toBe(403);
    const res = await call('PATCH', O(), 'OWNER', { name: 'Acme Inc' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ name: 'Acme Inc', plan: 'UNLIMITED', role: 'OWNER' });
    const row = (await audit()).at(-1)!;
    expect(row.action).toBe('organization.update');
    expect(JSON.parse(row.before!)).toMatchObject({ name: 'Acme', plan: 'UNLIMITED' });
    expect(JSON.parse(row.after!)).toMatchObject({ name: 'Acme Inc', plan: 'UNLIMITED' });
    for (const body of [{}, { color: 'red' }, { plan: 'GOLD' }]) {
      const r = await call('PATCH', O(), 'OWNER', body);
      expect([r.statusCode, codeOf(r)]).toEqual([422, 'request_validation_failed']);
    }
  });

  it("refuses a plan over HTTP, even from its OWNER (403, audited); the operator's CLI sets it", async () => {
    await setup();
    // The owner of a new, FREE organization would lift every limit of its own.
    const created = await call('POST', '/v1/organizations', 'DEVELOPER', { name: 'Side project' });
    const side = `/v1/organizations/${created.json().data.id}`;
    for (const body of [{ plan: 'UNLIMITED' }, { name: 'Renamed', plan: 'PAID' }]) {
      const r = await call('PATCH', side, 'DEVELOPER', body);
      expect([r.statusCode, codeOf(r)]).toEqual([403, 'forbidden']);
      expect(r.json().error.message).toMatch(/operator/);
    }
    expect((await call('GET', side, 'DEVELOPER')).json().data).toMatchObject({ name: 'Side project', plan: 'FREE' });
    // Read, modify, write back: the plan it has is echoed, not changed, so the rename goes through.
    const read = (await call('GET', side, 'DEVELOPER')).json().data as { name: string; plan: string };
    const echoed = await call('PATCH', side, 'DEVELOPER', { name: 'Side project', plan: read.plan });
    expect([echoed.statusCode, echoed.json().data]).toEqual([200, expect.objectContaining({ plan: 'FREE' })]);
    expect((await call('PATCH', side, 'DEVELOPER', { plan: 'free' })).statusCode).toBe(422);
    const refused = (await audit()).filter((a) => a.action === 'organization.plan_refused');
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ actor_type: 'user', actor_name: 'developer@example.com' });
    expect(JSON.parse(refused[0]!.before!)).toEqual({ plan: 'FREE' });
    expect(JSON.parse(refused[0]!.after!)).toEqual({ plan: 'UNLIMITED' });
    // The operator, at the server.
    const org = await env.app.accounts.setPlan('Side project', 'PAID');
    expect(org.plan).toBe('PAID');
    expect((await audit()).at(-1)).toMatchObject({ action: 'organization.update', actor_type: 'cli' });
  });

  it('only its OWNER deletes it, with everything in it; the audit row stays', async () => {
    await setup();
    expect((await call('DELETE', O(), 'ADMIN')).statusCode).toBe(403);
    const res = await call('DELETE', O(), 'OWNER');
    expect([res.statusCode, res.body]).toEqual([204, '']);
    expect((await call('GET', O(), 'OWNER')).statusCode).toBe(404);
    expect(await env.query('SELECT count(*) AS n FROM projects')).toEqual([{ n: 0 }]);
    expect((await audit()).at(-1)).toMatchObject({ action: 'organization.delete', after: null });
  });
});

describe('projects', () => {
  it('an ADMIN creates, renames and deletes one; a DEVELOPER may not', async () => {
    await setup();
    expect((await call('POST', `${O()}/projects`, 'DEVELOPER', { name: 'Api' })).statusCode).toBe(403);
    const created = await call('POST', `${O()}/projects`, 'ADMIN', { name: 'Api' });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    const dup = await call('POST', `${O()}/projects`, 'ADMIN', { name: 'Api' });
    expect([dup.statusCode, codeOf(dup)]).toEqual([409, 'conflict']);
    const renamed = await call('PATCH', `${O()}/projects/${id}`, 'ADMIN', { name: 'Backend' });
    expect(renamed.json().data).toMatchObject({ id, name: 'Backend' });
    expect((await call('DELETE', `${O()}/projects/${id}`, 'DEVELOPER')).statusCode).toBe(403);
    expect((await call('DELETE', `${O()}/projects/${id}`, 'ADMIN')).statusCode).toBe(204);
    expect((await call('GET', `${O()}/projects/${id}`, 'ADMIN')).statusCode).toBe(404);
    expect((await audit()).map((a) => a.action).slice(-3)).toEqual([
      'project.create',
      'project.update',
      'project.delete',
    ]);
  });

  it('merges settings into the ones stored and refuses unknown keys by name', async () => {
    await setup();
    const P = `${O()}/projects/${env.init.project_id}`;
    await call('PATCH', P, 'ADMIN', { settings: { click_tracking: true } });
    const both = await call('PATCH', P, 'ADMIN', { settings: { open_tracking: true } });
    expect(both.json().data.settings).toEqual({
      click_tracking: true,
      open_tracking: true,
      one_click_unsubscribe: false,
      relay_tracking: false,
    });
    const unknown = await call('PATCH', P, 'ADMIN', { settings: { pixel: true } });
    expect([unknown.statusCode, codeOf(unknown)]).toEqual([422, 'request_validation_failed']);
    expect(unknown.json().error.details.fields[0].field).toBe('pixel');
    const wrongType = await call('PATCH', P, 'ADMIN', { settings: { click_tracking: 'yes' } });
    expect(wrongType.statusCode).toBe(422);
    expect((await call('GET', P, 'DEVELOPER')).json().data.settings).toEqual({
      click_tracking: true,
      open_tracking: true,
      one_click_unsubscribe: false,
      relay_tracking: false,
    });
  });

  it('audits a change from the CLI as the OS user', async () => {
    await setup();
    await env.app.accounts.createProject(env.init.organization_id, { name: 'From CLI' });
    expect((await audit()).at(-1)).toMatchObject({ action: 'project.create', actor_type: 'cli' });
  });
});
