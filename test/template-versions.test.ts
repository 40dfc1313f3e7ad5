import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.ts';
import { runSvc } from './cli-runner.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { call as callKey, email } from './http-helpers.ts';
import { caller, codeOf, signInMembers, type Res } from './management-helpers.ts';

// Template versions and layouts (issue 35; decisions.md, "Template versions and layouts"): every
// save is a version, a draft is not what sends use, publish and rollback, a send naming a
// version, and layouts named by id with one {{ content }} slot.

let env: TestEnv;
let tokens: Record<string, string> = {};
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  tokens = await signInMembers(env, ['DEVELOPER', 'VIEWER']);
  key = await env.key({ env: 'TEST' });
});
afterAll(() => env.close());

const T = () => `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}/templates`;
const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => env, tokens)(...args);
const dev = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
  call(method, `${T()}${path}`, 'DEVELOPER', body as never);
/** The status, code and first field of a refusal. */
const refusal = (r: Res) => [
  r.statusCode,
  codeOf(r),
  r.json<{ error: { details?: { fields?: { field: string }[] } } }>().error.details?.fields?.[0]?.field,
];

/** Creates a template over the API and answers it. */
async function create(body: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await dev('POST', '', { name: String(body.slug), subject_template: 'Hi {{ name }}', ...body });
  expect(r.statusCode, r.body).toBe(201);
  return r.json().data;
}

/** Sends the template of `slug` with the TEST key and answers the stored email's detail. */
async function send(slug: string, variables: Record<string, unknown> = { name: 'Ann' }) {
  const r = await callKey(env, key, {
    body: email({ subject: undefined, text: undefined, template: slug, variables }),
  });
  expect(r.statusCode, r.body).toBe(202);
  const d = (await callKey(env, key, { url: `/v1/emails/${r.json().data.id}` })).json().data;
  const [row] = await env.query<{ template_version: number }>('SELECT template_version FROM emails WHERE id = ?', d.id);
  return { ...d, template_version: row!.template_version } as Record<string, any>;
}

describe('template versions', () => {
  it('every save is a version; a draft is not sent; publish, then roll back to an older version', async () => {
    const t = await create({ slug: 'news', html_template: '<p>One {{ name }}</p>' });
    expect(t).toMatchObject({ version: 1, published_version: 1, is_layout: false, layout_id: null });
    // A PATCH as the contract has it publishes what it saves.
    const two = await dev('PATCH', `/${t.id}`, { html_template: '<p>Two {{ name }}</p>' });
    expect(two.json().data).toMatchObject({ version: 2, published_version: 2 });
    expect(await send('news')).toMatchObject({ html_body: '<p>Two Ann</p>', template_version: 2 });
    // A draft is saved (the template shows it) but sends keep the published version.
    const draft = await dev('PATCH', `/${t.id}`, { html_template: '<p>Three {{ name }}</p>', draft: true });
    expect(draft.json().data).toMatchObject({
      version: 3,
      published_version: 2,
      html_template: '<p>Three {{ name }}</p>',
    });
    expect(await send('news')).toMatchObject({ html_body: '<p>Two Ann</p>', template_version: 2 });

    const list = await call('GET', `${T()}/news/versions`, 'VIEWER');
    expect(list.json().data.map((v: { version: number; published: boolean }) => [v.version, v.published])).toEqual([
      [3, false],
      [2, true],
      [1, false],
    ]);
    const one = await call('GET', `${T()}/${t.id}/versions/1`, 'VIEWER');
    expect(one.json().data).toMatchObject({ version: 1, published: false, html_template: '<p>One {{ name }}</p>' });
    expect((await call('GET', `${T()}/${t.id}/versions/9`, 'VIEWER')).statusCode).toBe(404);
    expect((await call('GET', `${T()}/${t.id}/versions/x`, 'VIEWER')).statusCode).toBe(404);

    expect((await call('POST', `${T()}/${t.id}/publish`, 'VIEWER', { version: 3 })).statusCode).toBe(403);
    const published = await dev('POST', `/${t.id}/publish`, { version: 3 });
    expect([published.statusCode, published.json().data.published_version]).toEqual([200, 3]);
    expect(await send('news')).toMatchObject({ html_body: '<p>Three Ann</p>', template_version: 3 });
    // The rollback: an older version published again.
    await dev('POST', `/${t.id}/publish`, { version: 1 });
    expect(await send('news')).toMatchObject({ html_body: '<p>One Ann</p>', template_version: 1 });
    // A save after a rollback follows the latest version, and publishes.
    const four = await dev('PATCH', `/${t.id}`, { subject_template: 'Four' });
    expect(four.json().data).toMatchObject({
      version: 4,
      published_version: 4,
      html_template: '<p>Three {{ name }}</p>',
    });

    const actions = await env.query<{ action: string }>(
      `SELECT action FROM audit_logs WHERE target_id = ? ORDER BY ${env.auditOrder}`,
      t.id,
    );
    expect(actions.map((a) => a.action)).toEqual([
      'template.create',
      'template.update',
      'template.draft',
      'template.publish',
      'template.publish',
      'template.update',
    ]);
  });

  it('publishing a version that does not exist: 422 naming version, nothing changed', async () => {
    const t = await create({ slug: 'lonely', text_template: 'x' });
    expect(refusal(await dev('POST', `/${t.id}/publish`, { version: 2 }))).toEqual([
      422,
      'request_validation_failed',
      'version',
    ]);
    expect(refusal(await dev('POST', `/${t.id}/publish`, { version: 0 }))).toEqual([
      422,
      'request_validation_failed',
      'version',
    ]);
    expect((await call('GET', `${T()}/lonely`, 'VIEWER')).json().data.published_version).toBe(1);
  });

  it('a send may name a version (the service side); one that does not exist is 422 naming template_version', async () => {
    const t = await create({ slug: 'pinned', text_template: 'v1 {{ name }}' });
    await dev('PATCH', `/${t.id}`, { text_template: 'v2 {{ name }}', draft: true });
    const pid = env.init.project_id;
    expect(await env.app.templates.getBySlug(pid, 'pinned')).toMatchObject({
      version: 1,
      text_template: 'v1 {{ name }}',
    });
    expect(await env.app.templates.getBySlug(pid, 'pinned', 2)).toMatchObject({
      id: t.id,
      version: 2,
      text_template: 'v2 {{ name }}',
    });
    const missing = await env.app.templates.getBySlug(pid, 'pinned', 3).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(AppError);
    expect(missing).toMatchObject({
      code: 'request_validation_failed',
      status: 422,
      details: { fields: [{ field: 'template_version' }] },
    });
    await expect(env.app.templates.getBySlug(pid, 'no-such', 1)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('POST /v1/emails with template_version sends that version; a missing one is 422 naming it', async () => {
    const t = await create({ slug: 'pinned-http', text_template: 'v1 {{ name }}' });
    await dev('PATCH', `/${t.id}`, { text_template: 'v2 {{ name }}', draft: true });
    const body = (over: object) => ({
      body: email({
        subject: undefined,
        text: undefined,
        template: 'pinned-http',
        variables: { name: 'Ann' },
        ...over,
      }),
    });
    const v2 = await callKey(env, key, { method: 'POST', url: '/v1/emails', ...body({ template_version: 2 }) });
    expect(v2.statusCode, v2.body).toBe(202);
    expect((await callKey(env, key, { url: `/v1/emails/${v2.json().data.id}` })).json().data.text_body).toBe('v2 Ann');
    const v1 = await callKey(env, key, { method: 'POST', url: '/v1/emails', ...body({}) });
    expect((await callKey(env, key, { url: `/v1/emails/${v1.json().data.id}` })).json().data.text_body).toBe('v1 Ann');
    const missing = await callKey(env, key, { method: 'POST', url: '/v1/emails', ...body({ template_version: 9 }) });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error.details.fields[0].field).toBe('template_version');
    const alone = await callKey(env, key, {
      method: 'POST',
      url: '/v1/emails',
      body: email({ template_version: 2 }),
    });
    expect(alone.json().error.details.fields.map((f: { field: string }) => f.field)).toContain('template_version');
  });

  it('previews a saved version (default the latest, a draft too) and unsaved content in a layout', async () => {
    const t = await create({ slug: 'drafty', html_template: '<p>Old {{ name }}</p>' });
    await dev('PATCH', `/${t.id}`, { html_template: '<p>New {{ name }}</p>', draft: true });
    const preview = (body: unknown) => call('POST', `${T()}/preview`, 'VIEWER', body as never);
    const latest = await preview({ template_id: 'drafty', variables: { name: '<Ann>' } });
    expect([latest.statusCode, latest.json().data.html]).toEqual([200, '<p>New &lt;Ann&gt;</p>']);
    expect((await preview({ template_id: t.id, version: 1, variables: { name: 'A' } })).json().data.html).toBe(
      '<p>Old A</p>',
    );
    expect(refusal(await preview({ template_id: t.id, version: 7 }))).toEqual([
      422,
      'request_validation_failed',
      'version',
    ]);
    expect(refusal(await preview({ template_id: t.id, subject_template: 'x' }))).toEqual([
      422,
      'request_validation_failed',
      'subject_template',
    ]);
    const layout = await create({ slug: 'frame', is_layout: true, html_template: '<main>{{ content }}</main>' });
    const inLayout = await preview({
      subject_template: 'S',
      html_template: '<b>{{ n }}</b>',
      layout_id: layout.id,
      variables: { n: 1 },
    });
    expect(inLayout.json().data).toEqual({ subject: 'S', html: '<main><b>1</b></main>', text: null });
  });

  it('test-sends the latest version, draft or not, or a named version; a missing one is 422 naming version', async () => {
    const t = await create({ slug: 'tested', text_template: 'Published {{ name }}' });
    const testSend = (body: Record<string, unknown>) =>
      dev('POST', `/${t.id}/test-send`, { to: 'ann@example.org', from: 'a@example.com', env: 'TEST', ...body });
    const sent = await testSend({ variables: { name: 'Ann' } });
    expect(sent.statusCode, sent.body).toBe(202);
    const [row] = await env.query<{ text_body: string | null; template_version: number }>(
      'SELECT template_version FROM emails WHERE id = ?',
      sent.json().data.id,
    );
    expect(row!.template_version).toBe(1);
    expect(refusal(await testSend({ version: 5 }))).toEqual([422, 'request_validation_failed', 'version']);
  });

  // Needs `template_version` in the send request (the lead's side of issue 35): a test send of a
  // draft names its version in the send it makes. Enable once the send schema has the field.
  it('test-sends a draft', async () => {
    const t = await create({ slug: 'tested-draft', text_template: 'Published {{ name }}' });
    await dev('PATCH', `/${t.id}`, { text_template: 'Draft {{ name }}', draft: true });
    const sent = await dev('POST', `/${t.id}/test-send`, {
      to: 'ann@example.org',
      from: 'a@example.com',
      env: 'TEST',
      variables: { name: 'Ann' },
    });
    expect(sent.statusCode, sent.body).toBe(202);
    const d = (await callKey(env, key, { url: `/v1/emails/${sent.json().data.id}` })).json().data;
    expect(d.text_body).toBe('Draft Ann');
  });
});

describe('layouts', () => {
  it('renders the child inside its layout, with the same variables in both; html escaped once', async () => {
    const layout = await create({
      slug: 'brand',
      is_layout: true,
      html_template: '<html><h1>{{ brand }}</h1>{{ content }}<footer>{{ name }}</footer></html>',
      text_template: '{{ brand }}\n{{content}}\n-- {{ name }}',
    });
    expect(layout).toMatchObject({ is_layout: true, layout_id: null });
    const child = await create({
      slug: 'welcome-l',
      layout_id: 'brand',
      html_template: '<p>Hi {{ name }}</p>',
      text_template: 'Hi {{ name }}',
    });
    expect(child.layout_id).toBe(layout.id);
    const d = await send('welcome-l', { name: '<Ann>', brand: 'Acme' });
    expect(d.html_body).toBe('<html><h1>Acme</h1><p>Hi &lt;Ann&gt;</p><footer>&lt;Ann&gt;</footer></html>');
    expect(d.text_body).toBe('Acme\nHi <Ann>\n-- <Ann>');
    // A variable only the layout uses is still required.
    const r = await callKey(env, key, {
      body: email({ subject: undefined, text: undefined, template: 'welcome-l', variables: { name: 'A' } }),
    });
    expect([r.statusCode, codeOf(r)]).toEqual([422, 'template_variable_missing']);
    // A send uses the layout's version published at send time; its drafts are not sent.
    await dev('PATCH', `/${layout.id}`, { html_template: '<div>{{ content }}</div>' });
    await dev('PATCH', `/${layout.id}`, { html_template: '<s>{{ content }}</s>', draft: true });
    expect((await send('welcome-l', { name: 'B', brand: 'x' })).html_body).toBe('<div><p>Hi B</p></div>');
  });

  it('refuses a layout naming itself, a non-layout as layout, a layout naming a layout, a bad slot: 422 naming the field', async () => {
    const plain = await create({ slug: 'plain', text_template: 'x' });
    const layout = await create({ slug: 'shell', is_layout: true, html_template: '<i>{{ content }}</i>' });
    expect(refusal(await dev('PATCH', `/${layout.id}`, { layout_id: layout.id }))).toEqual([
      422,
      'request_validation_failed',
      'layout_id',
    ]);
    expect(refusal(await dev('PATCH', `/${plain.id}`, { layout_id: plain.id }))).toEqual([
      422,
      'request_validation_failed',
      'layout_id',
    ]);
    const other = { name: 'o', subject_template: 's', text_template: 't' };
    expect(refusal(await dev('POST', '', { ...other, slug: 'o1', layout_id: plain.id }))).toEqual([
      422,
      'request_validation_failed',
      'layout_id',
    ]);
    expect(
      refusal(
        await dev('POST', '', {
          ...other,
          slug: 'o2',
          is_layout: true,
          text_template: '{{ content }}',
          layout_id: layout.id,
        }),
      ),
    ).toEqual([422, 'request_validation_failed', 'layout_id']);
    expect(refusal(await dev('POST', '', { ...other, slug: 'o3', layout_id: 'no-such' }))).toEqual([
      422,
      'request_validation_failed',
      'layout_id',
    ]);
    expect(
      refusal(await dev('POST', '', { ...other, slug: 'o4', is_layout: true, html_template: '<p>no slot</p>' })),
    ).toEqual([422, 'request_validation_failed', 'html_template']);
    expect(refusal(await dev('PATCH', `/${layout.id}`, { html_template: '{{ content }}{{ content }}' }))).toEqual([
      422,
      'request_validation_failed',
      'html_template',
    ]);
    // is_layout is set at creation only.
    expect(refusal(await dev('PATCH', `/${layout.id}`, { is_layout: false }))).toEqual([
      422,
      'request_validation_failed',
      'is_layout',
    ]);
    expect((await env.query("SELECT count(*) AS n FROM templates WHERE slug LIKE 'o_'"))[0]).toMatchObject({ n: 0 });
  });

  it('a layout in use cannot be deleted (409); once no template names it, it can', async () => {
    const layout = await create({ slug: 'used', is_layout: true, html_template: '{{ content }}' });
    const child = await create({ slug: 'user', layout_id: layout.id, html_template: 'x' });
    const refused = await dev('DELETE', `/${layout.id}`);
    expect([refused.statusCode, codeOf(refused)]).toEqual([409, 'conflict']);
    expect((await call('GET', `${T()}/used`, 'VIEWER')).statusCode).toBe(200);
    await dev('PATCH', `/${child.id}`, { layout_id: null });
    expect((await dev('DELETE', `/${layout.id}`)).statusCode).toBe(204);
    // The child's versions keep their content; an old version naming the deleted layout cannot be published.
    expect(refusal(await dev('POST', `/${child.id}/publish`, { version: 1 }))).toEqual([
      422,
      'request_validation_failed',
      'layout_id',
    ]);
  });
});

describe('svc templates versions and publish', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-templates-'));
    const init = [
      'init',
      '--email',
      'o@example.com',
      '--password',
      'pw-123456789',
      '--org',
      'Acme',
      '--project',
      'Web',
    ];
    expect((await runSvc(dir, init)).code).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists versions, publishes one; a version that does not exist is exit 1, one that is not a number exit 2', async () => {
    const svc = (...args: string[]) => runSvc(dir, ['templates', ...args, '--project', 'Web']);
    writeFileSync(join(dir, 'layout.html'), '<main>{{ content }}</main>');
    writeFileSync(join(dir, 'w.html'), '<p>{{ name }}</p>');
    expect(
      (
        await svc(
          'create',
          '--name',
          'L',
          '--slug',
          'frame',
          '--subject',
          's',
          '--html-file',
          join(dir, 'layout.html'),
          '--is-layout',
        )
      ).code,
    ).toBe(0);
    const created = await svc(
      'create',
      '--name',
      'W',
      '--slug',
      'w',
      '--subject',
      'Hi',
      '--html-file',
      join(dir, 'w.html'),
      '--layout',
      'frame',
      '--json',
    );
    expect(created.json()).toMatchObject({ version: 1, layout_id: expect.any(String) });
    const draft = await svc('update', 'w', '--subject', 'Draft', '--draft', '--no-layout', '--json');
    expect(draft.json()).toMatchObject({ version: 2, published_version: 1, layout_id: null });
    const versions = await svc('versions', 'w', '--json');
    expect(versions.json().map((v: { version: number; published: boolean }) => [v.version, v.published])).toEqual([
      [2, false],
      [1, true],
    ]);
    const published = await svc('publish', 'w', '2');
    expect([published.code, published.stdout.trim()]).toEqual([0, 'published version 2 of template w (latest 2)']);
    const missing = await svc('publish', 'w', '5');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('version: template w has no version 5');
    const notANumber = await svc('publish', 'w', 'two');
    expect([notANumber.code, notANumber.stderr.split('\n')[0]]).toEqual([
      2,
      'error: a version is a whole number from 1, got "two"',
    ]);
    expect((await svc('show', 'w', '1', '--json')).json()).toMatchObject({ version: 1, subject_template: 'Hi' });
  });
});
