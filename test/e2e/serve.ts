import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

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
  const child = spawn(process.execPath, [join(ROOT, 'src/main.ts'), ...all], { cwd: opts.cwd, env: opts.env });
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
