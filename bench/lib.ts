// Shared pieces of the benchmarks: server child processes, RSS and CPU sampling,
// the request body, wrk, statistics. Not a test; nothing here asserts.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { bundleInto } from '../scripts/bundle.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export const env = {
  num(name: string, fallback: number): number {
    const v = process.env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number, got ${v}`);
    return n;
  },
  flag: (name: string) => process.env[name] === '1',
};

/** What a benchmark measured, for `npm run bench:check`. */
export interface BenchResult {
  name: string;
  /** svc's figure and its peer's (the floor, or Postfix), in `unit`. */
  svc: number;
  peer: number;
  peerName: string;
  unit: string;
  /** svc's CPU per unit of work and the peer's, µs. */
  svcCpuUs: number;
  peerCpuUs: number;
  /** The target: a least ratio svc/peer, or a least figure of svc's own. */
  target: { ratio: number } | { min: number };
  /** Every accepted email accounted for, every message delivered. */
  ok: boolean;
}

/** Hands the result to bench:check (BENCH_RESULT_FILE); a benchmark run by hand prints only. */
export function reportResult(r: BenchResult): void {
  const file = process.env.BENCH_RESULT_FILE;
  if (file) writeFileSync(file, JSON.stringify(r));
}

// ---------------------------------------------------------------------------
// Temp dirs and child processes, all cleaned up on exit (also on ^C).

const children = new Set<ChildProcess>();
const dirs = new Set<string>();

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-${prefix}-`));
  dirs.add(dir);
  return dir;
}

function cleanup(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  if (!env.flag('BENCH_KEEP')) for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    cleanup();
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------
// /proc sampling (Linux).

export function procStatus(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(Vm\w+|Threads):\s+(\d+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64

/** utime+stime of the whole process (all threads), in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** What each thread of a process has done so far, by thread name (threads of one name summed). */
export interface ThreadTimes {
  /** CPU time (utime + stime), ms. */
  cpu: number;
  /** Time runnable but waiting for a core (schedstat), ms. */
  runqueue: number;
}

export function threadTimes(pid: number): Map<string, ThreadTimes> {
  const out = new Map<string, ThreadTimes>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
      // schedstat: ns on a core, ns runnable waiting for one, timeslices.
      const runqueue = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
      const t = out.get(name) ?? { cpu: 0, runqueue: 0 };
      out.set(name, { cpu: t.cpu + cpu, runqueue: t.runqueue + runqueue });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/**
 * How fast this machine runs a fixed single-threaded workload right now (ms; lower is
 * faster): JSON round trips and SHA-256, the kind of work a server does. On a shared VM
 * it moves with the neighbours; a server's CPU per request moving with it is the machine.
 */
export function machineSpeedMs(): number {
  const doc = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, { n: i, s: `v${i}`.repeat(4) }]));
  const buf = Buffer.alloc(1 << 20, 7);
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t = performance.now();
    for (let i = 0; i < 10; i++) {
      JSON.parse(JSON.stringify(doc));
      createHash('sha256').update(buf).digest();
    }
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** Software counters of a process (perf stat -p) while `during` runs; empty when perf is missing. */
export async function perfStat(pid: number, during: () => Promise<void>): Promise<Map<string, number>> {
  const events = 'task-clock,context-switches,cpu-migrations,page-faults,raw_syscalls:sys_enter';
  let out = '';
  let child: ChildProcess | undefined;
  try {
    child = spawn('perf', ['stat', '-x', ',', '-e', events, '-p', String(pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', () => (child = undefined));
    await new Promise((r) => setTimeout(r, 100));
  } catch {
    child = undefined;
  }
  await during();
  const counters = new Map<string, number>();
  if (!child) return counters;
  const done = new Promise((r) => child!.once('exit', r));
  child.kill('SIGINT');
  await done;
  for (const line of out.split('\n')) {
    const [value, , event] = line.split(',');
    if (event && value && !Number.isNaN(Number(value))) counters.set(event, Number(value));
  }
  return counters;
}

/** CPU ms of each thread of a process so far, by thread name. */
export function threadCpuMs(pid: number): Map<string, number> {
  return new Map([...threadTimes(pid)].map(([name, t]) => [name, t.cpu]));
}

/** Samples VmRSS every `everyMs` while running; VmHWM is the kernel's own peak. */
export class RssSampler {
  maxKb = 0;
  private timer: NodeJS.Timeout;
  private pid: number;
  constructor(pid: number, everyMs = 100) {
    this.pid = pid;
    this.timer = setInterval(() => this.sample(), everyMs);
    this.sample();
  }
  sample(): void {
    try {
      this.maxKb = Math.max(this.maxKb, procStatus(this.pid).VmRSS ?? 0);
    } catch {
      // the process is gone
    }
  }
  /** Restarts the sampled peak (e.g. after warmup). */
  reset(): void {
    this.maxKb = 0;
    this.sample();
  }
  hwmKb(): number {
    try {
      return procStatus(this.pid).VmHWM ?? 0;
    } catch {
      return 0;
    }
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

// ---------------------------------------------------------------------------
// Servers.

export type ServerKind = 'svc' | 'floor';

export interface Server {
  kind: ServerKind;
  pid: number;
  url: string;
  key: string;
  dataDir: string;
  rss: RssSampler;
  /** SIGTERM, waits for a clean close; returns the kernel's peak RSS (kB) read just before. */
  stop(): Promise<{ hwmKb: number; sampledMaxKb: number }>;
}

const DIST = join(ROOT, '.bench-tmp', 'dist');

/**
 * By default both servers run from source through tsx, like `npm start`. With
 * BENCH_DIST=1 they run under plain node from an esbuild bundle built here into
 * .bench-tmp/dist/ by scripts/bundle.ts, the esbuild step of `npm run build`:
 * svc as `main.js serve`, i.e. the JavaScript that `npm run build`
 * puts in dist/ and in the executable, minus the pkg step. dist/ itself is not
 * used, so a stale or missing build cannot be measured by mistake.
 */
export const fromExe = env.flag('BENCH_EXE');
export const fromDist = fromExe || env.flag('BENCH_DIST');
/** What the servers run from, for a benchmark's heading. */
export const runsFrom = fromExe
  ? 'the executable dist/svc (BENCH_EXE=1, built now), the floor from the bundle'
  : fromDist
    ? 'a bundle (BENCH_DIST=1)'
    : 'source via tsx';
let built: Promise<void> | undefined;
let exeBuilt = false;

/**
 * With BENCH_EXE=1, svc runs as the single executable itself: `npm run build` is run first,
 * so dist/svc is this tree's (about 15 s), and svc is started as `dist/svc serve`. The floor
 * runs from the bundle (BENCH_DIST), which is its JavaScript in the same Node 24. Node flags
 * (BENCH_NODE_ARGS) reach the executable through NODE_OPTIONS.
 */
export function buildExe(): void {
  if (exeBuilt) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status})`);
  exeBuilt = true;
}

async function buildDist(): Promise<void> {
  await bundleInto(DIST, ['bench/floor-server.ts']);
}

/** A port free right now (the OS picks it; `svc serve` prints its URL only at log level info). */
export async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Waits for `GET /healthz` to answer ok; fails if the server exits first or `withinMs` passes. */
export async function untilHealthy(url: string, exited: Promise<unknown>, withinMs = 60_000): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + withinMs;
  while (!gone && Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(
    gone ? 'svc exited before it was healthy' : `svc was not healthy at ${url} within ${withinMs / 1000} s`,
  );
}

/**
 * Starts a server in its own child process on a fresh temp data dir.
 *
 * svc is the real entry point, `svc serve --data-dir <tmp> --http-port <free>
 * --smtp-port <smtpPort, 0 = off> --log-level warn`; its first start prints the generated
 * credentials, and the TEST API key is read from them. The floor
 * (bench/floor-server.ts) listens on port 0 and prints {"port","key"}.
 */
export async function startServer(kind: ServerKind, extraNodeArgs: string[] = [], smtpPort = 0): Promise<Server> {
  const dataDir = tempDir(kind);
  if (fromDist) await (built ??= buildDist());
  const exe = fromExe && kind === 'svc';
  if (exe) buildExe();
  let args: string[];
  let port = 0;
  if (kind === 'svc') {
    port = await freePort();
    const entry = exe ? [] : fromDist ? [join(DIST, 'main.js')] : ['--import', 'tsx', 'src/main.ts'];
    args = [...entry, 'serve', '--data-dir', dataDir, '--http-port', String(port), '--smtp-port', String(smtpPort)];
    args.push('--log-level', 'warn', '--log-format', 'json');
  } else {
    args = [...(fromDist ? [join(DIST, 'floor-server.js')] : ['--import', 'tsx', 'bench/floor-server.ts']), dataDir];
  }
  const child = exe
    ? spawn(join(ROOT, 'dist', 'svc'), args, {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, NODE_OPTIONS: extraNodeArgs.join(' ') },
      })
    : spawn(process.execPath, [...extraNodeArgs, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout });
  const key = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      if (kind === 'floor') {
        const info = JSON.parse(line) as { port: number; key: string };
        port = info.port;
        resolve(info.key);
      }
      const m = /TEST API key:\s+(svc_test_\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`${kind} server exited with ${code} before it was ready`)));
  });
  const url = `http://127.0.0.1:${port}`;
  if (kind === 'svc') await untilHealthy(url, exited);
  const pid = child.pid!;
  const rss = new RssSampler(pid);
  return {
    kind,
    pid,
    url,
    key,
    dataDir,
    rss,
    async stop() {
      rss.sample();
      const hwmKb = rss.hwmKb();
      rss.stop();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      children.delete(child);
      if (code !== 0) console.warn(`  (${kind} server exited with ${code ?? 'a signal'})`);
      return { hwmKb, sampledMaxKb: rss.maxKb };
    },
  };
}

/** Row counts of a stopped server's database. */
export function countRows(dataDir: string, tables: string[]): Record<string, number> {
  const db = new Database(join(dataDir, 'svc.sqlite'));
  try {
    return Object.fromEntries(
      tables.map((t) => [t, (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n]),
    );
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------
// The request body: ~1 KB of JSON, 3 recipients, like a transactional email.

export function emailBody(n = 0): Record<string, unknown> {
  const order = 100_000 + n;
  return {
    from: 'notifications@example.com',
    from_name: 'Acme Shop',
    to: ['alice@example.com', 'bob@example.org', 'carol.smith@example.net'],
    subject: `Your order #${order} has shipped`,
    html:
      `<!doctype html><html><body><p>Hi Alice,</p><p>Good news: your order <b>#${order}</b> is on its way. ` +
      'It left our warehouse this morning and should arrive within 2-3 business days.</p>' +
      '<p>Items: 1 × Trail running shoes (size 42), 2 × Merino socks.</p>' +
      '<p>Track it any time: <a href="https://shop.example.com/orders/track?o=' +
      order +
      '">shop.example.com/orders</a></p><p>Thanks for shopping with us,<br>The Acme team</p></body></html>',
    text:
      `Hi Alice,\n\nGood news: your order #${order} is on its way. It left our warehouse this morning ` +
      'and should arrive within 2-3 business days.\n\nItems: 1 x Trail running shoes (size 42), 2 x Merino socks.' +
      '\n\nTrack it any time: https://shop.example.com/orders/track?o=' +
      `${order}\n\nThanks for shopping with us,\nThe Acme team\n`,
    tags: ['order-shipped'],
  };
}

// ---------------------------------------------------------------------------
// wrk.

export interface WrkResult {
  requests: number;
  durationUs: number;
  rps: number;
  non2xx: number;
  errors: { connect: number; read: number; write: number; timeout: number };
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * A wrk Lua script: the body and headers are set once, so wrk sends the same
 * bytes on every request; done() prints a JSON summary. No response() callback
 * (it would make wrk parse every response in Lua).
 */
export function wrkScript(dir: string, body: string, key: string): string {
  if (body.includes(']==]')) throw new Error('body would end the Lua long string');
  const file = join(dir, 'post.lua');
  writeFileSync(
    file,
    `wrk.method = "POST"
wrk.body = [==[${body}]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${key}"

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`,
  );
  return file;
}

export async function runWrk(opts: {
  url: string;
  script: string;
  seconds: number;
  connections: number;
  threads: number;
}): Promise<WrkResult> {
  const args = [
    '-t',
    String(opts.threads),
    '-c',
    String(opts.connections),
    '-d',
    `${opts.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    opts.script,
    opts.url,
  ];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  children.delete(child);
  const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${out}`);
  const j = JSON.parse(line.slice('WRKJSON '.length)) as Record<string, number>;
  return {
    requests: j.requests!,
    durationUs: j.duration_us!,
    rps: j.requests! / (j.duration_us! / 1e6),
    non2xx: j.status!,
    errors: { connect: j.connect!, read: j.read!, write: j.write!, timeout: j.timeout! },
    p50Ms: j.p50! / 1000,
    p90Ms: j.p90! / 1000,
    p99Ms: j.p99! / 1000,
    maxMs: j.max! / 1000,
  };
}

// ---------------------------------------------------------------------------
// Statistics and formatting.

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile of unsorted samples. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const mb = (kb: number) => kb / 1024;
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

export function machine(): string {
  const cpus = Number(readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? 0);
  const memKb = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0);
  return `${cpus} vCPU, ${Math.round(memKb / 1024 / 1024)} GB, Node ${process.versions.node}`;
}

/**
 * `svc serve` on `dataDir` as a child process, started by `command` (node with its arguments, or
 * the executable), on a free HTTP port and no SMTP port, quiet; answers once /healthz does (up to
 * 120 s: a first start on a data dir of a million emails checks it before serving).
 */
export async function serveOn(
  dataDir: string,
  command: [string, string[]],
): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const serve = ['serve', '--data-dir', dataDir, '--http-port', String(port), '--hostname', 'mta.bench.example'];
  serve.push('--smtp-port', '0', '--log-level', 'warn', '--log-format', 'json');
  const child = spawn(command[0], [...command[1], ...serve], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  process.once('exit', () => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  await untilHealthy(url, exited, 120_000);
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
