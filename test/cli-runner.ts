import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
/** The CLI's entry point from source, as `npm run svc` runs it. */
export const SOURCE_ENTRY = join(ROOT, 'bin/svc.ts');
/**
 * The `svc` the suites run: bin/svc.ts bundled for this run as the executable bundles it
 * (test/global-setup.ts), a third of the start-up of the sources.
 */
export const SVC_ENTRY = inject('svcBundle');

/**
 * The store a test dir's commands use. SQLite: the data dir `dir/data`. With
 * SVC_TEST_STORE=postgres (vitest's postgres project): a fresh PostgreSQL database per test
 * dir, named to every command run there through SVC_DATABASE_URL, as an operator's
 * environment would.
 */
const databases = new Map<string, Promise<string>>();
export async function storeEnv(dir: string): Promise<Record<string, string>> {
  if (process.env.SVC_TEST_STORE !== 'postgres') return {};
  let url = databases.get(dir);
  if (!url) {
    const { freshPgDatabase } = await import('./postgres/db.ts');
    url = freshPgDatabase('cli').then((d) => d.url);
    databases.set(dir, url);
  }
  return { SVC_DATABASE_URL: await url };
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

export interface RunOptions {
  /** The umask the command runs under (octal, such as '022'), set by a shell as a user's would be. */
  umask?: string;
  /** Run bin/svc.ts from source, as `npm run svc` does, instead of the run's bundle. */
  source?: boolean;
}

/** The program and arguments that run the CLI, under `umask` when given. */
function command(args: string[], opts: RunOptions): [string, string[]] {
  const entry = [...CHILD_NODE_FLAGS, opts.source ? SOURCE_ENTRY : SVC_ENTRY];
  if (opts.umask === undefined) return [process.execPath, [...entry, ...args]];
  return ['/bin/sh', ['-c', `umask ${opts.umask} && exec "$0" "$@"`, process.execPath, ...entry, ...args]];
}

/**
 * Node flags of the `svc` children: a young generation that holds what loading the program
 * allocates. V8's default (1 MB, doubling) collected it a dozen times in each command, a tenth
 * of its CPU over the ~500 commands of a run (docs/performance.md, "The test suite"). A test
 * speed-up only: a person runs a few commands, and NODE_OPTIONS does not accept this flag.
 */
const CHILD_NODE_FLAGS = ['--min-semi-space-size=16'];

/**
 * Runs the CLI in a child process, like a user's shell would, in
 * `dir` with its data dir at `dir/data`; `env` adds variables.
 */
export async function runSvc(dir: string, args: string[], env: Record<string, string> = {}, opts: RunOptions = {}) {
  const [file, argv] = command(args, opts);
  const store = await storeEnv(dir);
  return new Promise<Run>((resolve) => {
    execFile(
      file,
      argv,
      { cwd: dir, env: { ...process.env, SVC_DATA_DIR: join(dir, 'data'), ...NO_RESOLVER, ...store, ...env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
      },
    );
  });
}

export interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Its exit code once it ended. */
  exited: Promise<number | null>;
}

/** Runs the CLI like runSvc, handing back the running child (to signal it). */
export async function spawnSvc(dir: string, args: string[], env: Record<string, string> = {}): Promise<Spawned> {
  const store = await storeEnv(dir);
  const child = spawn(process.execPath, [SVC_ENTRY, ...args], {
    cwd: dir,
    env: { ...process.env, SVC_DATA_DIR: join(dir, 'data'), ...NO_RESOLVER, ...store, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export interface Served {
  child: ChildProcess;
  /** Everything it logged so far (JSON lines). */
  log: () => string;
  /** Everything it printed on stdout so far (the first start's credentials). */
  stdout: () => string;
  /** The URL it logged as it started serving. */
  url: () => string;
  /** SIGTERM, then its exit code. */
  stop: () => Promise<number | null>;
}

/**
 * The resolver a served `svc` asks unless a test names one: a closed port on loopback, which
 * refuses at once. A server looks names up on its own (svc doctor at start, domain checks),
 * and no test may ask a resolver off this machine.
 */
export const NO_DNS = '127.0.0.1:9';

/**
 * A command looks names up too (`svc domains add` shows what DNS holds): a test gives it a
 * resolver, or `SVC_DNS_SERVERS: ''` to take the one the server recorded, or it gets none.
 */
const NO_RESOLVER = { SVC_DNS_SERVERS: NO_DNS };

/** `svc serve` on free ports, in `dir` with its data dir at `dir/data`, once it says it is serving. */
export async function startServe(
  dir: string,
  args: string[] = [],
  env: Record<string, string> = {},
  opts: RunOptions = {},
): Promise<Served> {
  const [file, argv] = command(['serve', '--http-port', '0', '--smtp-port', '0', ...args], opts);
  const child = spawn(file, argv, {
    cwd: dir,
    env: {
      ...process.env,
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_LOG_FORMAT: 'json',
      SVC_DNS_SERVERS: NO_DNS,
      ...(await storeEnv(dir)),
      ...env,
    },
  });
  let log = '';
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => log.includes('svc is serving') && resolve();
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`svc serve exited ${code}: ${log}`)));
  });
  child.removeAllListeners('exit');
  return {
    child,
    log: () => log,
    stdout: () => stdout,
    url: () => {
      const line = log.split('\n').find((l) => l.includes('svc is serving'))!;
      return (JSON.parse(line) as { url: string }).url;
    },
    stop: () => {
      // One that already exited (crashed) answers its code at once, never waits forever.
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    },
  };
}
