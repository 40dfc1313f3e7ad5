import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, startServe, type Run } from './cli-runner.ts';

let dir: string;

/** Runs the CLI in the test's temp dir. */
const svc = (...args: string[]): Promise<Run> => runSvc(dir, args);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-projects-'));
  const init = ['init', '--email', 'owner@example.com', '--password', 'pw-123456789', '--org', 'Acme'];
  expect((await svc(...init, '--project', 'Web')).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc projects settings', () => {
  it('shows the settings with their defaults when given no flag', async () => {
    const r = await svc('projects', 'settings', 'Web', '--json');
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ name: 'Web', settings: { click_tracking: false, open_tracking: false } });
  });

  it('turns one-click unsubscribe on and off', async () => {
    const on = await svc('projects', 'settings', 'Web', '--one-click-unsubscribe', 'on', '--json');
    expect(on.code).toBe(0);
    expect(on.json().settings).toMatchObject({ one_click_unsubscribe: true });
    const off = await svc('projects', 'settings', 'Web', '--one-click-unsubscribe', 'off', '--json');
    expect(off.json().settings).toMatchObject({ one_click_unsubscribe: false, relay_tracking: false });
  });

  it('turns tracking on and off, keeping the settings it was not given', async () => {
    const on = await svc('projects', 'settings', 'Web', '--click-tracking', 'on', '--json');
    expect(on.code).toBe(0);
    expect(on.json().settings).toEqual({
      click_tracking: true,
      open_tracking: false,
      one_click_unsubscribe: false,
      relay_tracking: false,
    });
    const both = await svc('projects', 'settings', 'Web', '--open-tracking', 'on', '--json');
    expect(both.json().settings).toEqual({
      click_tracking: true,
      open_tracking: true,
      one_click_unsubscribe: false,
      relay_tracking: false,
    });
    const off = await svc('projects', 'settings', 'Web', '--click-tracking', 'off');
    expect(off.code).toBe(0);
    expect(off.stdout).toContain(
      'settings: {"click_tracking":false,"open_tracking":true,"one_click_unsubscribe":false,"relay_tracking":false}',
    );
  });

  it('tells projects of the same name apart with --org', async () => {
    expect((await svc('orgs', 'create', '--name', 'Beta', '--owner', 'owner@example.com')).code).toBe(0);
    expect((await svc('projects', 'create', '--org', 'Beta', '--name', 'Web')).code).toBe(0);
    const ambiguous = await svc('projects', 'settings', 'Web', '--json');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.json().error.code).toBe('conflict');
    const beta = await svc('projects', 'settings', 'Web', '--org', 'Beta', '--open-tracking', 'on', '--json');
    expect(beta.code).toBe(0);
    expect(beta.json().settings).toEqual({
      click_tracking: false,
      open_tracking: true,
      one_click_unsubscribe: false,
      relay_tracking: false,
    });
  });

  it('fails for an unknown project, and refuses a value other than on or off as wrong usage', async () => {
    const missing = await svc('projects', 'settings', 'Nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not_found');
    const bad = await svc('projects', 'settings', 'Web', '--org', 'Acme', '--click-tracking', 'yes');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/on, off|choices/i);
  });

  it('has --help with an example', async () => {
    const h = await svc('projects', 'settings', '--help');
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/\nExamples?:\n {2}svc projects settings /);
    expect(h.stdout).toContain('--click-tracking');
  });
});

describe('--all-projects: an operator reads every project at once', () => {
  /** The id of the project Web of `org`. */
  const webOf = async (org: string): Promise<string> =>
    ((await svc('projects', 'list', '--org', org, '--json')).json() as { id: string; name: string }[]).find(
      (p) => p.name === 'Web',
    )!.id;

  it('lists the suppressions of every project, each naming its project', async () => {
    const [acme, beta] = [await webOf('Acme'), await webOf('Beta')];
    expect((await svc('suppressions', 'add', 'a@example.com', '--project', acme)).code).toBe(0);
    expect((await svc('suppressions', 'add', 'b@example.com', '--project', beta)).code).toBe(0);
    const all = await svc('suppressions', 'list', '--all-projects', '--json');
    expect(all.code).toBe(0);
    const rows = all.json() as { project_id: string; project: string; email: string }[];
    expect(rows.map((r) => [r.project_id, r.project, r.email]).sort()).toEqual(
      [
        [acme, 'Web', 'a@example.com'],
        [beta, 'Web', 'b@example.com'],
      ].sort(),
    );
    const human = await svc('suppressions', 'list', '--all-projects');
    expect(human.stdout.split('\n')[0]).toMatch(/^PROJECT\s+EMAIL\s+REASON/);
    expect((await svc('suppressions', 'list', '--all-projects', '--limit', '1', '--json')).json()).toHaveLength(1);
  }, 60_000);

  it('lists the webhooks of every project, each naming its project (the runbook finds a switched-off one)', async () => {
    const ids: [string, string][] = [];
    for (const org of ['Acme', 'Beta']) {
      const project = await webOf(org);
      const args = ['--url', `https://${org}.example.com/hooks`, '--events', 'delivered', '--json'];
      ids.push([project, (await svc('webhooks', 'create', '--project', project, ...args)).json().id as string]);
    }
    const all = await svc('webhooks', 'list', '--all-projects', '--json');
    expect(all.code).toBe(0);
    const rows = all.json() as { project_id: string; id: string; auto_disabled: boolean }[];
    expect(rows.map((r) => [r.project_id, r.id]).sort()).toEqual(ids.sort());
    const human = await svc('webhooks', 'list', '--all-projects');
    expect(human.stdout.split('\n')[0]).toMatch(/^PROJECT\s+ID\s+URL/);
  }, 60_000);

  it('is wrong usage together with --project, and one of them is needed', async () => {
    const both = await svc('suppressions', 'list', '--all-projects', '--project', 'Web');
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([
      2,
      "error: option '--all-projects' cannot be used with option '--project <project>'",
    ]);
    const neither = await svc('emails', 'list');
    expect([neither.code, neither.stderr.split('\n')[0]]).toEqual([
      2,
      'error: give --project P, or --all-projects for every project',
    ]);
    const paged = await svc('emails', 'list', '--all-projects', '--before', '0195f0a0-0000-7000-8000-000000000000');
    expect(paged.code).toBe(2);
  });

  it('lists the newest emails of every project, each naming its project', async () => {
    const served = await startServe(dir);
    try {
      const sent: [string, string][] = [];
      for (const org of ['Acme', 'Beta']) {
        const project = await webOf(org);
        const key = (
          await svc('keys', 'create', '--project', project, '--name', `all-${org}`, '--env', 'test', '--json')
        ).json().key as string;
        const args = ['--from', 'a@example.com', '--to', `${org}@example.org`, '--subject', 'Hi', '--text', 'x'];
        const r = await svc('send', '--server', served.url(), '--api-key', key, ...args, '--json');
        expect(r.code).toBe(0);
        sent.push([r.json().id as string, project]);
      }
      const all = await svc('emails', 'list', '--all-projects', '--status', 'SIMULATED', '--json');
      expect(all.code).toBe(0);
      const rows = all.json() as { id: string; project_id: string; project: string }[];
      // Newest first across the projects.
      expect(rows.map((r) => [r.id, r.project_id])).toEqual(sent.reverse());
      expect((await svc('emails', 'list', '--all-projects', '--limit', '1', '--json')).json()).toHaveLength(1);
      const human = await svc('emails', 'list', '--all-projects');
      expect(human.stdout.split('\n')[0]).toMatch(/^PROJECT\s+ID\s+STATUS/);
    } finally {
      await served.stop();
    }
  }, 90_000);
});
