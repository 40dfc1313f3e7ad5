import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, type Run } from './cli-runner.ts';

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

  it('turns tracking on and off, keeping the settings it was not given', async () => {
    const on = await svc('projects', 'settings', 'Web', '--click-tracking', 'on', '--json');
    expect(on.code).toBe(0);
    expect(on.json().settings).toEqual({ click_tracking: true, open_tracking: false });
    const both = await svc('projects', 'settings', 'Web', '--open-tracking', 'on', '--json');
    expect(both.json().settings).toEqual({ click_tracking: true, open_tracking: true });
    const off = await svc('projects', 'settings', 'Web', '--click-tracking', 'off');
    expect(off.code).toBe(0);
    expect(off.stdout).toContain('settings: {"click_tracking":false,"open_tracking":true}');
  });

  it('tells projects of the same name apart with --org', async () => {
    expect((await svc('orgs', 'create', '--name', 'Beta', '--owner', 'owner@example.com')).code).toBe(0);
    expect((await svc('projects', 'create', '--org', 'Beta', '--name', 'Web')).code).toBe(0);
    const ambiguous = await svc('projects', 'settings', 'Web', '--json');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.json().error.code).toBe('conflict');
    const beta = await svc('projects', 'settings', 'Web', '--org', 'Beta', '--open-tracking', 'on', '--json');
    expect(beta.code).toBe(0);
    expect(beta.json().settings).toEqual({ click_tracking: false, open_tracking: true });
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
