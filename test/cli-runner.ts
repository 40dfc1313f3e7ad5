import { execFile } from 'node:child_process';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
/** The CLI's entry point, run from source. */
export const SVC_ENTRY = join(ROOT, 'src/main.ts');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

/**
 * Runs the CLI from source in a child process, like a user's shell would, in
 * `dir` with its data dir at `dir/data`; `env` adds variables.
 */
export function runSvc(dir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SVC_ENTRY, ...args],
      { cwd: dir, env: { ...process.env, SVC_DATA_DIR: join(dir, 'data'), ...env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
      },
    );
  });
}
