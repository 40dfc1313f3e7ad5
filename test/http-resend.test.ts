import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { outputSchemas } from '../src/emails/index.ts';
import { count, createTestEnv, verifyDomain, type TestEnv } from './harness.ts';
import { signingDomainRows } from './signing-domain.ts';
import { signInMembers } from './management-helpers.ts';

// POST …/projects/{project_id}/emails/{email_id}/resend (decisions.md, "Management endpoints
// that the specification only names"; docs/decisions.md "Onboarding trial and resend").

let env: TestEnv;
afterEach(() => env.close());
let tokens: Record<string, string> = {};

async function setup(settings: Record<string, string> = {}): Promise<void> {
  env = await createTestEnv(settings);
  tokens = await signInMembers(env, ['DEVELOPER', 'VIEWER']);
  await verifyDomain(env, 'sender.test');
}

type Res = LightMyRequestResponse;
const resend = (emailId: string, who = 'DEVELOPER', projectId = env.init.project_id): Promise<Res> =>
  env.server.inject({
    method: 'POST',
    url: `/v1/organizations/${env.init.organization_id}/projects/${projectId}/emails/${emailId}/resend`,
    headers: { authorization: `Bearer ${tokens[who]}` },
  });
const errorOf = (r: Res) => [r.statusCode, r.json<{ error: { code: string } }>().error.code];

const MESSAGE = {
  from: 'news@sender.test',
  from_name: 'News',
  to: ['ada@dest.test', 'bob@dest.test'],
  cc: ['cy@dest.test'],
  bcc: ['dee@dest.test'],
  reply_to: ['help@sender.test'],
  subject: 'Hello',
  text: 'Hi there',
  html: '<p>Hi there</p>',
  headers: { 'X-Campaign': 'spring' },
  tags: ['welcome'],
  attachments: [
    { filename: 'a.txt', content_type: 'text/plain', content_base64: Buffer.from('hello').toString('base64') },
  ],
};

async function sendWith(keyEnv: 'LIVE' | 'TEST', payload: Record<string, unknown> = MESSAGE): Promise<string> {
  const key = await env.key({ env: keyEnv });
  const r = await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${key}` },
    payload,
  });
  expect(r.statusCode).toBe(202);
  return r.json().data.id as string;
}

const row = async (id: string) =>
  (await env.query<Record<string, unknown>>('SELECT * FROM emails WHERE id = ?', id))[0]!;
const detail = async (id: string) => {
  const key = await env.key({ env: 'TEST', permissions: 'READ_ONLY' });
  const get = (path: string) =>
    env.server.inject({ method: 'GET', url: `/v1/emails/${path}`, headers: { authorization: `Bearer ${key}` } });
  return { email: (await get(id)).json().data, events: (await get(`${id}/events`)).json().data };
};
const CONTENT = [
  'from_email',
  'from_name',
  'to_emails',
  'cc_emails',
  'bcc_emails',
  'reply_to',
  'subject',
  'tags',
  'headers',
  'html_body',
  'text_body',
  'source',
];
const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
const attachmentsOf = (id: string) =>
  env.query(
    'SELECT a.position, a.filename, a.content_type, a.content FROM attachments a JOIN emails e ON e.seq = a.email_seq WHERE e.id = ? ORDER BY a.position',
    id,
  );

describe('resend over the Management API', () => {
  it('a DEVELOPER resends a LIVE email as a new QUEUED email with the same content, audited', async () => {
    await setup();
    const original = await sendWith('LIVE');
    const r = await resend(original);
    expect(r.statusCode).toBe(201);
    const data = r.json().data;
    expect(outputSchemas.sendResponseSchema.strict().parse(data)).toEqual({
      id: expect.any(String),
      status: 'QUEUED',
      skipped_recipients: [],
    });
    expect(data.id).not.toBe(original);
    const [before, after] = [await detail(original), await detail(data.id)];
    expect(pick(after.email, CONTENT)).toEqual(pick(before.email, CONTENT));
    expect(after.email).toMatchObject({ status: 'QUEUED', sent_at: null });
    expect(after.events).toEqual([expect.objectContaining({ type: 'queued', data: { resent_from: original } })]);
    expect(await row(data.id)).toMatchObject({ resent_from: original, env: 'LIVE', is_trial: 0, api_key_id: null });
    expect(await attachmentsOf(data.id)).toEqual(await attachmentsOf(original));
    // Four recipient rows, due now, and four more recipients counted against the month's volume.
    expect(await count(env, 'recipients r JOIN emails e ON e.seq = r.email_seq', 'e.id = ?', data.id)).toBe(4);
    expect(await env.query("SELECT count FROM usage_counters WHERE period = '2026-03'")).toEqual([{ count: 8 }]);

    const audit = await env.query<Record<string, string>>("SELECT * FROM audit_logs WHERE action = 'email.resend'");
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      organization_id: env.init.organization_id,
      project_id: env.init.project_id,
      actor_type: 'user',
      actor_name: 'developer@example.com',
      target_type: 'email',
      target_id: data.id,
      before: null,
    });
    expect(JSON.parse(audit[0]!.after!)).toEqual({ ...data, resent_from: original });
  });

  it('a TEST email resends as TEST (SIMULATED), not counted, suppression list not applied', async () => {
    await setup();
    const original = await sendWith('TEST', { ...MESSAGE, from: 'x@unverified.test' });
    await env.query(
      "INSERT INTO suppressions (project_id, email, reason, created_at) VALUES (?, 'ada@dest.test', 'MANUAL', ?)",
      env.init.project_id,
      new Date(env.clock.now()).toISOString(),
    );
    const r = await resend(original);
    expect(r.statusCode).toBe(201);
    expect(r.json().data).toMatchObject({ status: 'SIMULATED', skipped_recipients: [] });
    const after = await detail(r.json().data.id);
    expect(after.events).toEqual([expect.objectContaining({ type: 'simulated', data: { resent_from: original } })]);
    expect(await count(env, 'usage_counters')).toBe(0);
  });

  it('applies the rules as they stand now: suppressed recipients skipped, all suppressed 422, domain no longer verified 422', async () => {
    await setup();
    const original = await sendWith('LIVE', {
      from: 'news@sender.test',
      to: ['ada@dest.test', 'bob@dest.test'],
      subject: 'S',
      text: 'T',
    });
    const suppress = (address: string) =>
      env.query(
        "INSERT INTO suppressions (project_id, email, reason, created_at) VALUES (?, ?, 'HARD_BOUNCE', ?)",
        env.init.project_id,
        address,
        new Date(env.clock.now()).toISOString(),
      );
    await suppress('ada@dest.test');
    const one = await resend(original);
    expect(one.statusCode).toBe(201);
    expect(one.json().data.skipped_recipients).toEqual([{ email: 'ada@dest.test', reason: 'HARD_BOUNCE' }]);
    expect((await detail(one.json().data.id)).email.to_emails).toEqual(['bob@dest.test']);

    await suppress('bob@dest.test');
    expect(errorOf(await resend(original))).toEqual([422, 'all_recipients_suppressed']);
    await env.query("DELETE FROM suppressions WHERE email = 'bob@dest.test'");

    await env.query("UPDATE domains SET status = 'FAILED' WHERE name = 'sender.test'");
    expect(errorOf(await resend(original))).toEqual([422, 'domain_not_verified']);
    await env.query("UPDATE domains SET status = 'VERIFIED' WHERE name = 'sender.test'");
    await env.query('UPDATE organizations SET dpa_accepted_at = NULL');
    expect(errorOf(await resend(original))).toEqual([422, 'dpa_not_signed']);
    // Only the one accepted resend is audited.
    expect(await count(env, 'audit_logs', "action = 'email.resend'")).toBe(1);
    expect(await count(env, 'emails')).toBe(2);
  });

  it('refuses the onboarding-trial email (422 trial_restricted)', async () => {
    await setup({ sandboxDomain: 'try.svc.test' });
    const org = await env.app.accounts.createOrg({ name: 'Operator', owner_email: 'owner@example.com' });
    const ops = await env.app.accounts.createProject(org.id, { name: 'Ops' });
    for (const [sql, params] of signingDomainRows({
      organizationId: org.id,
      projectId: ops.id,
      name: 'try.svc.test',
      selector: 's1',
    }).statements)
      await env.query(sql, ...params);
    const key = await env.app.keys.createKey(env.init.project_id, { name: 'mine', env: 'LIVE' }, env.init.user_id);
    const sent = await env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${key.key}` },
      payload: { from: 'hello@try.svc.test', to: ['owner@example.com'], subject: 'First', text: 'It works' },
    });
    expect(sent.statusCode).toBe(202);
    const r = await resend(sent.json().data.id as string, 'OWNER');
    expect(errorOf(r)).toEqual([422, 'trial_restricted']);
    expect(r.json().error.details).toEqual({ reason: 'trial_email' });
  });

  it('404 for an email of another project or an unknown id, 403 for a VIEWER, 409 once the body is gone', async () => {
    await setup();
    const other = await env.app.accounts.createProject(env.init.organization_id, { name: 'Other' });
    const original = await sendWith('TEST');
    expect(errorOf(await resend(original, 'DEVELOPER', other.id))).toEqual([404, 'not_found']);
    expect(errorOf(await resend('0190c4d8-0000-7000-8000-000000000000'))).toEqual([404, 'not_found']);
    expect(errorOf(await resend('not-a-uuid'))).toEqual([404, 'not_found']);
    expect(errorOf(await resend(original, 'VIEWER'))).toEqual([403, 'forbidden']);
    await env.query('DELETE FROM email_bodies WHERE email_seq = (SELECT seq FROM emails WHERE id = ?)', original);
    expect(errorOf(await resend(original))).toEqual([409, 'conflict']);
    expect(await count(env, 'emails')).toBe(1);
  });
});
