import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { call, delta, email, NOTHING, row, runCase, snapshot, type Case } from './http-helpers.ts';

// Send rule 6: templates by slug, variables, autoescape, overrides, and the
// sandbox (decisions.md, Templates). The harness sets a 500 ms render limit.

let env: TestEnv;
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
  const t = (slug: string, subject_template: string, html_template: string | null, text_template: string | null) =>
    env.app.templates.create(env.init.project_id, { name: slug, slug, subject_template, html_template, text_template });
  await t(
    'welcome',
    'Welcome {{ name }}',
    '<p>Hi {{ name }}</p><div>{{ bio | safe }}</div>',
    'Hi {{ name }} ({{ user.plan }})',
  );
  await t(
    'optional',
    'Hello{% if name is defined %} {{ name }}{% endif %}',
    null,
    'Dear {{ title | default("customer") }}',
  );
  await t('text-only', 'Note', null, 'Just text for {{ name }}');
  await t('subject-var', 'Re: {{ topic }}', null, 'body');
  // Stored directly, as a template saved before a guard existed would be: the render must still refuse.
  await storeRaw('escape-range', '{{ range.constructor("return process")() }}');
  await storeRaw('escape-string', '{{ "".constructor.constructor("return process")().exit() }}');
  await storeRaw('escape-proto', '{{ name.__proto__ }}');
  await storeRaw('escape-cycler', '{{ cycler.constructor("return globalThis")() }}');
  await storeRaw('runaway', '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}done');
  await storeRaw('recursion', '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}');
  await storeRaw('huge-range', '{% for i in range(100000000) %}x{% endfor %}');
});
afterAll(() => env.close());

async function storeRaw(slug: string, text: string): Promise<void> {
  const now = new Date(env.clock.now()).toISOString();
  const id = randomUUID();
  await env.query(
    `INSERT INTO templates (id, project_id, name, slug, subject_template, html_template, text_template, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'Subject', NULL, ?, ?, ?)`,
    id,
    env.init.project_id,
    slug,
    slug,
    text,
    now,
    now,
  );
  // Sends render a template's published version (1, as the templates row says by default).
  await env.query(
    `INSERT INTO template_versions (template_id, version, subject_template, html_template, text_template, created_at)
     VALUES (?, 1, 'Subject', NULL, ?, ?)`,
    id,
    text,
    now,
  );
}

const tpl = (template: string, over: Record<string, unknown> = {}) =>
  email({ subject: undefined, text: undefined, template, ...over });

async function detail(id: string): Promise<Record<string, unknown>> {
  return (await call(env, key, { url: `/v1/emails/${id}` })).json().data;
}

describe('template sends', () => {
  it('renders subject, html and text; html escapes variables, `safe` does not, subject and text do not escape', async () => {
    const res = await runCase(env, key, {
      name: 'render',
      body: tpl('welcome', { variables: { name: '<b>Ann</b> & co', bio: '<i>bio</i>', user: { plan: 'gold' } } }),
      status: 202,
      rows: { emails: 1, email_events: 1 },
    });
    const d = await detail(res.json().data.id);
    expect(d.subject).toBe('Welcome <b>Ann</b> & co');
    expect(d.html_body).toBe('<p>Hi &lt;b&gt;Ann&lt;/b&gt; &amp; co</p><div><i>bio</i></div>');
    expect(d.text_body).toBe('Hi <b>Ann</b> & co (gold)');
    const t = await row<{ template_version: number }>(env, 'SELECT template_version FROM emails WHERE id = ?', d.id);
    expect(t.template_version).toBe(1);
  });

  it('uses the request subject and text over the template, keeping the template html', async () => {
    const res = await runCase(env, key, {
      name: 'override',
      body: tpl('welcome', {
        subject: 'My own subject',
        text: 'My own text',
        variables: { name: 'Ann', bio: '', user: {} },
      }),
      status: 202,
      rows: { emails: 1 },
    });
    const d = await detail(res.json().data.id);
    expect(d.subject).toBe('My own subject');
    expect(d.text_body).toBe('My own text');
    expect(d.html_body).toBe('<p>Hi Ann</p><div></div>');
  });

  it('keeps request overrides literal: they are not rendered as template code', async () => {
    const res = await runCase(env, key, {
      name: 'literal override',
      body: tpl('welcome', {
        subject: 'Literal {{ braces }} and {{ 1 + 2 }}',
        text: 'Text {% if x %}y{% endif %}',
        variables: { name: 'Ann', bio: '', user: {} },
      }),
      status: 202,
      rows: { emails: 1 },
    });
    const d = await detail(res.json().data.id);
    expect(d.subject).toBe('Literal {{ braces }} and {{ 1 + 2 }}');
    expect(d.text_body).toBe('Text {% if x %}y{% endif %}');
  });

  it('does not count `is defined` and `default` as use of a variable', async () => {
    const res = await runCase(env, key, { name: 'optional', body: tpl('optional'), status: 202, rows: { emails: 1 } });
    const d = await detail(res.json().data.id);
    expect([d.subject, d.html_body, d.text_body]).toEqual(['Hello', null, 'Dear customer']);
  });

  const refused: Case[] = [
    { name: 'unknown slug → 404 not_found', body: tpl('nope'), status: 404, code: 'not_found' },
    {
      name: 'a missing variable → 422 template_variable_missing naming it',
      body: tpl('text-only'),
      status: 422,
      code: 'template_variable_missing',
      details: { variable: 'name' },
    },
    {
      name: 'a missing nested variable → 422 naming it',
      body: tpl('welcome', { variables: { name: 'a', bio: 'b' } }),
      status: 422,
      code: 'template_variable_missing',
      check: (res) => expect(JSON.stringify(res.json().error.details)).toContain('user'),
    },
    {
      name: 'a variable with a line break in the subject → 422 template_render_error',
      body: tpl('subject-var', { variables: { topic: 'x\r\nBcc: victim@example.org' } }),
      status: 422,
      code: 'template_render_error',
    },
    ...['escape-range', 'escape-string', 'escape-proto', 'escape-cycler'].map((slug): Case => ({
      name: `sandbox escape attempt ${slug} → 422 template_render_error`,
      body: tpl(slug, { variables: { name: 'n' } }),
      status: 422,
      code: 'template_render_error',
      check: (res) => expect(res.body).not.toMatch(/\[object process\]|globalThis/),
    })),
    {
      name: 'runaway recursion → 422 template_render_error',
      body: tpl('recursion'),
      status: 422,
      code: 'template_render_error',
    },
    { name: 'range() past the sandbox cap → 422', body: tpl('huge-range'), status: 422, code: 'template_render_error' },
  ];
  it.each(refused)('$name', async (c) => {
    await runCase(env, key, c);
  });

  it('does not find a template of another project (404)', async () => {
    const other = await env.app.accounts.createProject(env.init.organization_id, { name: 'Other' });
    const k = (await env.app.keys.createKey(other.id, { name: 'o', env: 'TEST' })).key!;
    await runCase(env, k, {
      name: 'other',
      body: tpl('text-only', { variables: { name: 'a' } }),
      status: 404,
      code: 'not_found',
    });
  });
});

describe('a runaway template', () => {
  it('times out with template_render_error while GET /healthz on a real socket keeps answering', async () => {
    const base = await env.server.listen({ port: 0, host: '127.0.0.1' });
    const before = await snapshot(env);
    const started = performance.now();
    let done = false;
    const send = fetch(`${base}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(tpl('runaway')),
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as { error: { code: string; message: string } },
    }));
    void send.finally(() => (done = true));
    const latencies: number[] = [];
    while (!done) {
      const t = performance.now();
      const h = await fetch(`${base}/healthz`);
      expect(h.status).toBe(200);
      await h.text();
      latencies.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
    const res = await send;
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('template_render_error');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(latencies.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...latencies)).toBeLessThan(400);
    expect(res.body.error.message).toMatch(/time limit/);
    expect(await delta(env, before)).toEqual(NOTHING);
    // The pool recovers: the next render works.
    await runCase(env, key, {
      name: 'after',
      body: tpl('text-only', { variables: { name: 'x' } }),
      status: 202,
      rows: { emails: 1 },
    });
  });
});
