import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { NO_DNS } from '../cli-runner.ts';
export { initDataDir } from './init-data-dir.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Starts `svc serve` from source as its own process (JSON logs, random ports);
 * `url` resolves with its base URL once it logs that it is serving, or rejects
 * with its log if it exits first.
 */
export function spawnServe(
  dataDir: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): { child: ChildProcess; url: Promise<string> } {
  const all = ['serve', '--data-dir', dataDir, '--http-port', '0', '--smtp-port', '0', '--log-format', 'json', ...args];
  // No resolver off this machine (cli-runner.ts, NO_DNS) unless the test names one.
  const env = { SVC_DNS_SERVERS: NO_DNS, ...(opts.env ?? process.env) };
  const child = spawn(process.execPath, [join(ROOT, 'bin/svc.ts'), ...all], { cwd: opts.cwd, env });
  const url = new Promise<string>((resolve, reject) => {
    let log = '';
    child.stderr.on('data', (c: Buffer) => {
      log += c.toString();
      const m = /"url":"(http:\/\/[^"]+)".*svc is serving/.exec(log);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code, signal) => reject(new Error(`server exited ${code ?? signal}: ${log}`)));
  });
  return { child, url };
}

/** POSTs `n` emails from n@sender.test to r<i>@dest.test, one at a time; each must be 202. Their ids. */
export async function sendMany(base: string, key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${base}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'n@sender.test', to: [`r${i}@dest.test`], subject: `m${i}`, text: 'hello' }),
    });
    expect(res.status).toBe(202);
    ids.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  return ids;
}
