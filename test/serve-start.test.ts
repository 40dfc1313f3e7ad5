import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from './cli-runner.ts';

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
  });
});
