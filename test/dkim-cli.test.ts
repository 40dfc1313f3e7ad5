import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, type Run } from './cli-runner.ts';
import { HOST } from './domains-helpers.ts';

// `svc domains rotate-dkim` and `svc domains update --ed25519` as a user runs them (the CLI door
// only; the rules are tested in process by dkim-rotation.test.ts and dkim-ed25519.test.ts).

let dir: string;
const svc = (args: string[]): Promise<Run> => runSvc(dir, args, { SVC_HOSTNAME: HOST });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-dkim-cli-'));
  const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789', '--org', 'Acme', '--project', 'Web'];
  expect((await svc(init)).code).toBe(0);
  expect((await svc(['domains', 'add', 'rot.example', '--org', 'Acme'])).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc domains rotate-dkim', () => {
  it('prints the new key to publish; a second rotation while it waits is one clear line and exit 1', async () => {
    const first = await svc(['domains', 'rotate-dkim', 'rot.example']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/svc\d{6}-2 rsa pending: publish its record/);
    expect(first.stdout).toMatch(/svc\d{6}-2\._domainkey\.rot\.example +dkim-next +v=DKIM1; k=rsa; p=/);
    const second = await svc(['domains', 'rotate-dkim', 'rot.example']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^error: dkim_rotation_in_progress: a DKIM key of rot\.example waits for its record/);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('update --ed25519 takes on or off only (exit 2 otherwise)', async () => {
    const bad = await svc(['domains', 'update', 'rot.example', '--ed25519', 'yes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Allowed choices are on, off');
  });
});
