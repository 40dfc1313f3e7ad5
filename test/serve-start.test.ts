import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, storeEnv } from './cli-runner.ts';
import { spawnServe } from './e2e/serve.ts';

// A port another program holds: svc serve says which one and which setting, and exits 1,
// with nothing of it left running (before, the HTTP API stayed up over a closed store).

let root: string;
let taken: Server;
let port: number;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-serve-start-'));
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

describe('svc serve on a port in use', () => {
  it.each([
    ['the HTTP API', '--http-port', ['--smtp-port', '0']],
    ['the SMTP relay', '--smtp-port', ['--http-port', '0']],
    ['the inbound MX', '--inbound-port', ['--http-port', '0', '--smtp-port', '0', '--inbound-host', '127.0.0.1']],
  ])('%s: one line naming %s, exit 1, nothing left listening', async (what, flag, others) => {
    const dir = mkdtempSync(join(root, 'dir-'));
    const r = await runSvc(dir, ['serve', ...others, flag, String(port)], { SVC_LOG_FORMAT: 'json' });
    expect(r.code).toBe(1);
    // The log's JSON lines may come before or after it; the one error line is the answer.
    const lines = r.stderr
      .trimEnd()
      .split('\n')
      .filter((l) => l.startsWith('error:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `error: invalid_setting: ${what} cannot listen on 127.0.0.1:${port}: ` +
        `the address is in use by another program (choose another ${flag})`,
    );
    expect(r.stderr).not.toContain('unhandled');
    expect(r.stderr).not.toContain('svc is serving');
    // Checked before anything is created: no credentials printed, no data dir made.
    expect(r.stdout).toBe('');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('creates no owner: the next start, on a free port, prints the credentials', async () => {
    const dir = mkdtempSync(join(root, 'dir-'));
    const failed = await runSvc(dir, ['serve', '--smtp-port', '0', '--http-port', String(port)]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).not.toContain('owner password');
    const env = { ...process.env, ...(await storeEnv(dir)) };
    const { child, url } = spawnServe(join(dir, 'data'), [], { cwd: dir, env });
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await url;
      expect(stdout).toMatch(
        /^First start on .*\n {2}owner email: {4}\S+\n {2}owner password: \S+\n {2}TEST API key: {3}\S+\n/,
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
