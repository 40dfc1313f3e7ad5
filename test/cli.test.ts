import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, type Run } from './cli-runner.ts';

let dir: string;

/** Runs the CLI in the test's temp dir. */
const svc = (...args: string[]): Promise<Run> => runSvc(dir, args);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc CLI', () => {
  let project = '';
  let keyId = '';

  it('prints its version and help', async () => {
    const v = await svc('--version');
    expect(v.code).toBe(0);
    // One version: package.json's, from source as from the executable (check-exe.sh, exe.test.ts).
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(v.stdout.trim()).toBe(pkg.version);
    const h = await svc('keys', 'create', '--help');
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/\nExamples?:\n/);
  });

  it.each([
    [['bogus-command']],
    [['keys']],
    [['keys', 'create', '--name', 'x']],
    [['init', '--email', 'a@example.com', '--password', 'pw-123456789', '--plan', 'GOLD']],
    [['keys', 'create', '--project', 'p', '--name', 'x', '--env', 'STAGING']],
    [['init', '--email', 'a@example.com']],
  ])('exits 2 with one line of usage error and where help is for %j', async (args) => {
    const r = await svc(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: [^\n]+\nrun 'svc[a-z -]* --help'\n$/);
  });

  it.each([
    [['send', '--foo'], "error: unknown option '--foo' (did you mean --from?)\nrun 'svc send --help'\n"],
    [['keys'], "error: missing command: one of create, list, revoke\nrun 'svc keys --help'\n"],
    [['keys', 'craete'], "error: unknown command 'craete' (did you mean create?)\nrun 'svc keys --help'\n"],
    [['send', '--from', 'a@example.com'], "error: give --api-key or set SVC_API_KEY\nrun 'svc send --help'\n"],
    [
      ['emails', 'list'],
      "error: give --project P, or --all-projects for every project\nrun 'svc emails list --help'\n",
    ],
  ])('wrong usage %j says so in one line and a hint, not the whole help', async (args, stderr) => {
    const r = await runSvc(dir, args, { SVC_API_KEY: '' });
    expect([r.code, r.stderr, r.stdout]).toEqual([2, stderr, '']);
  });

  it('still prints the help of a group on request (svc keys help, svc help keys)', async () => {
    for (const args of [
      ['keys', 'help'],
      ['help', 'keys'],
      ['keys', '--help'],
    ]) {
      const r = await svc(...args);
      expect([r.code, r.stdout]).toEqual([0, expect.stringContaining('Usage: svc keys [options] [command]')]);
    }
  });

  it('init creates the owner, organization, project and a TEST key', async () => {
    const r = await svc(
      'init',
      '--email',
      'owner@example.com',
      '--password',
      'pw-123456789',
      '--org',
      'Acme',
      '--project',
      'Web',
      '--accept-dpa',
      '--json',
    );
    expect(r.code).toBe(0);
    const out = r.json();
    expect(Object.keys(out).sort()).toEqual(['api_key', 'organization_id', 'project_id', 'user_id']);
    expect(Object.keys(out.api_key).sort()).toEqual(['env', 'id', 'key', 'permissions', 'prefix']);
    expect(out.api_key.key).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/);
    expect(out.api_key.key.startsWith(out.api_key.prefix)).toBe(true);
    project = out.project_id;
  });

  it('a failed operation exits 1 with the error code (stderr, or JSON on stdout)', async () => {
    const r = await svc('init', '--email', 'owner@example.com', '--password', 'pw-123456789');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: conflict: /);
    const j = await svc('keys', 'list', '--project', 'NoSuchProject', '--json');
    expect(j.code).toBe(1);
    expect(j.json().error.code).toBe('not_found');
  });

  it('creates, lists and revokes keys', async () => {
    const c = await svc(
      'keys',
      'create',
      '--project',
      'Web',
      '--name',
      'ci',
      '--env',
      'LIVE',
      '--permissions',
      'SENDING_ONLY',
      '--expires-at',
      '2030-01-01T00:00:00Z',
      '--json',
    );
    expect(c.code).toBe(0);
    const key = c.json();
    expect(key).toMatchObject({
      project_id: project,
      name: 'ci',
      env: 'LIVE',
      permissions: 'SENDING_ONLY',
      expires_at: '2030-01-01T00:00:00.000Z',
      revoked_at: null,
    });
    expect(key.key).toMatch(/^svc_live_/);
    keyId = key.id;
    const dup = await svc('keys', 'create', '--project', 'Web', '--name', 'ci', '--json');
    expect(dup.code).toBe(1);
    expect(dup.json().error.code).toBe('conflict');
    const l = await svc('keys', 'list', '--project', project, '--json');
    expect(
      l
        .json()
        .map((k: { name: string }) => k.name)
        .sort(),
    ).toEqual(['ci', 'default']);
    expect(l.json().every((k: object) => !('key' in k) && !('key_hash' in k))).toBe(true);
    const rv = await svc('keys', 'revoke', keyId, '--json');
    expect(rv.json().revoked_at).not.toBeNull();
    expect((await svc('keys', 'list', '--project', 'Web', '--json')).json()).toHaveLength(1);
    expect((await svc('keys', 'list', '--project', 'Web', '--include-revoked', '--json')).json()).toHaveLength(2);
    // The human output shows the secret once, on its own line, and no empty `key: -` above it.
    const shown = await svc('keys', 'create', '--project', 'Web', '--name', 'shown-once', '--env', 'TEST');
    expect(shown.code).toBe(0);
    const keyLines = shown.stdout.split('\n').filter((l) => /\bkey\b/.test(l) && !/^(name|id|prefix)/.test(l));
    expect(keyLines).toHaveLength(1);
    expect(keyLines[0]).toMatch(/^key \(shown once, keep it\): svc_test_\S{43}$/);
    expect(shown.stdout).not.toMatch(/^key: /m);
    const own = (await svc('keys', 'list', '--project', 'Web', '--json')).json() as { id: string; name: string }[];
    expect((await svc('keys', 'revoke', own.find((k) => k.name === 'shown-once')!.id)).code).toBe(0);
  });

  it('takes --env and the other fixed values in any case', async () => {
    for (const [name, env, permissions] of [
      ['lower', 'live', 'read_only'],
      ['mixed', 'Test', 'Sending_Only'],
    ]) {
      const c = await svc(
        'keys',
        'create',
        '--project',
        'Web',
        '--name',
        name!,
        '--env',
        env!,
        '--permissions',
        permissions!,
        '--json',
      );
      expect(c.code).toBe(0);
      expect(c.json()).toMatchObject({ env: env!.toUpperCase(), permissions: permissions!.toUpperCase() });
    }
    const bad = await svc('keys', 'create', '--project', 'Web', '--name', 'x', '--env', 'staging');
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([
      2,
      "error: option '--env <env>' argument 'staging' is invalid. Allowed choices are LIVE, TEST.",
    ]);
  });

  it('manages users, organizations, projects and members', async () => {
    expect(
      (await svc('users', 'create', '--email', 'dev@example.com', '--password', 'pw-123456789', '--json')).json(),
    ).toMatchObject({ email: 'dev@example.com' });
    const org = (
      await svc('orgs', 'create', '--name', 'Beta', '--owner', 'dev@example.com', '--plan', 'PAID', '--json')
    ).json();
    expect(org).toMatchObject({ name: 'Beta', plan: 'PAID', dpa_accepted_at: null });
    expect((await svc('orgs', 'set-plan', 'Beta', 'PREMIUM', '--json')).json().plan).toBe('PREMIUM');
    expect(
      (await svc('orgs', 'accept-dpa', org.id, '--user', 'dev@example.com', '--json')).json().dpa_accepted_at,
    ).not.toBeNull();
    expect((await svc('orgs', 'list', '--json')).json().map((o: { name: string }) => o.name)).toEqual(['Acme', 'Beta']);
    expect((await svc('projects', 'create', '--org', 'Beta', '--name', 'Api', '--json')).json()).toMatchObject({
      name: 'Api',
      organization_id: org.id,
    });
    expect((await svc('projects', 'list', '--org', 'Beta', '--json')).json()).toHaveLength(1);
    const m = await svc(
      'members',
      'add',
      '--org',
      'Beta',
      '--email',
      'owner@example.com',
      '--role',
      'VIEWER',
      '--json',
    );
    expect(m.json()).toMatchObject({ email: 'owner@example.com', role: 'VIEWER' });
    expect((await svc('members', 'list', '--org', 'Beta', '--json')).json()).toHaveLength(2);
  });

  it('manages templates with a version bump on update', async () => {
    writeFileSync(join(dir, 'w.html'), '<p>Hi {{ name }}</p>');
    const c = await svc(
      'templates',
      'create',
      '--project',
      'Web',
      '--name',
      'Welcome',
      '--slug',
      'welcome',
      '--subject',
      'Hi {{ name }}',
      '--html-file',
      join(dir, 'w.html'),
      '--json',
    );
    expect(c.code).toBe(0);
    expect(c.json()).toMatchObject({
      slug: 'welcome',
      version: 1,
      html_template: '<p>Hi {{ name }}</p>',
      text_template: null,
    });
    const bad = await svc(
      'templates',
      'create',
      '--project',
      'Web',
      '--name',
      'Bad',
      '--slug',
      'bad',
      '--subject',
      'Hi {{ name',
      '--html-file',
      join(dir, 'w.html'),
      '--json',
    );
    expect(bad.code).toBe(1);
    expect(bad.json().error.code).toBe('template_render_error');
    const u = await svc(
      'templates',
      'update',
      'welcome',
      '--project',
      'Web',
      '--subject',
      'Hello {{ name }}',
      '--json',
    );
    expect(u.json()).toMatchObject({ version: 2, subject_template: 'Hello {{ name }}' });
    // --vars-file is the name send and templates share; the older --variables-file still works, unlisted.
    writeFileSync(join(dir, 'vars.json'), '{"name": "Ada"}');
    const vars = await svc(
      'templates',
      'update',
      'welcome',
      '--project',
      'Web',
      '--vars-file',
      join(dir, 'vars.json'),
      '--json',
    );
    expect(vars.json()).toMatchObject({ version: 3, variables: { name: 'Ada' } });
    writeFileSync(join(dir, 'vars.json'), '{"name": "Bea"}');
    const alias = await svc(
      'templates',
      'update',
      'welcome',
      '--project',
      'Web',
      '--variables-file',
      join(dir, 'vars.json'),
      '--json',
    );
    expect(alias.json()).toMatchObject({ version: 4, variables: { name: 'Bea' } });
    const help = await svc('templates', 'update', '--help');
    expect([help.stdout.includes('--vars-file'), help.stdout.includes('--variables-file')]).toEqual([true, false]);
    expect((await svc('templates', 'show', 'welcome', '--project', 'Web', '--json')).json().version).toBe(4);
    expect((await svc('templates', 'list', '--project', 'Web', '--json')).json()).toHaveLength(1);
    expect((await svc('templates', 'delete', 'welcome', '--project', 'Web')).code).toBe(0);
    expect((await svc('templates', 'show', 'welcome', '--project', 'Web')).code).toBe(1);
  });

  it('manages suppressions, with CSV import and export', async () => {
    expect((await svc('suppressions', 'add', 'Bounce@Example.com', '--project', 'Web', '--json')).json()).toMatchObject(
      { email: 'bounce@example.com', reason: 'MANUAL' },
    );
    writeFileSync(join(dir, 's.csv'), 'email,reason\na@example.com,HARD_BOUNCE\nnot-an-address,\nb@example.com,\n');
    const imp = await svc('suppressions', 'import', join(dir, 's.csv'), '--project', 'Web', '--json');
    // The good lines are imported, and the refused one makes the command fail.
    expect(imp.code).toBe(1);
    expect(imp.json()).toMatchObject({ imported: 2, invalid: [{ line: 3, email: 'not-an-address' }] });
    const human = await svc('suppressions', 'import', join(dir, 's.csv'), '--project', 'Web');
    expect(human.code).toBe(1);
    expect(human.stdout.trim()).toBe('imported 2 addresses, refused 1');
    writeFileSync(join(dir, 'one.csv'), 'email\nd@example.com\n');
    expect((await svc('suppressions', 'import', join(dir, 'one.csv'), '--project', 'Web')).stdout).toBe(
      'imported 1 address, refused 0\n',
    );
    expect((await svc('suppressions', 'remove', 'd@example.com', '--project', 'Web')).code).toBe(0);
    expect(human.stderr).toMatch(/^refused line 3: not-an-address: .+\n$/);
    writeFileSync(join(dir, 'ok.csv'), 'email\nc@example.com\n');
    const clean = await svc('suppressions', 'import', join(dir, 'ok.csv'), '--project', 'Web');
    expect([clean.code, clean.stderr]).toEqual([0, '']);
    expect((await svc('suppressions', 'remove', 'c@example.com', '--project', 'Web')).code).toBe(0);
    const exp = await svc('suppressions', 'export', '--project', 'Web', '--output', join(dir, 'out.csv'));
    expect(exp.code).toBe(0);
    const csv = readFileSync(join(dir, 'out.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('email,reason,created_at');
    expect(csv.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual([
      'a@example.com,HARD_BOUNCE',
      'b@example.com,MANUAL',
      'bounce@example.com,MANUAL',
    ]);
    expect((await svc('suppressions', 'remove', 'a@example.com', '--project', 'Web')).code).toBe(0);
    expect((await svc('suppressions', 'remove', 'a@example.com', '--project', 'Web')).code).toBe(1);
    expect((await svc('suppressions', 'list', '--project', 'Web', '--json')).json()).toHaveLength(2);
  });

  it('answers the same from source, as `npm run svc` runs it, as from the bundle the suites run', async () => {
    const args = ['keys', 'list', '--project', 'Web', '--json'];
    const [bundled, source] = await Promise.all([svc(...args), runSvc(dir, args, {}, { source: true })]);
    expect([source.code, source.stderr]).toEqual([0, '']);
    expect(source.stdout).toBe(bundled.stdout);
    expect(source.json().length).toBeGreaterThan(0);
  });

  it('reads emails: list, show, events', async () => {
    const l = await svc('emails', 'list', '--project', 'Web', '--json');
    expect(l.code).toBe(0);
    expect(l.json()).toEqual([]);
    const bad = await svc('emails', 'list', '--project', 'Web', '--limit', '500', '--json');
    expect(bad.code).toBe(1);
    expect(bad.json().error.code).toBe('request_validation_failed');
    const missing = await svc('emails', 'show', '0195f0a0-0000-7000-8000-000000000000', '--json');
    expect(missing.code).toBe(1);
    expect(missing.json().error.code).toBe('not_found');
  });
});
