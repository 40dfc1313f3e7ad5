// npm run bench:accept — POST /v1/emails throughput and latency against its floor.
//
// svc and the floor (bench/floor-server.ts) each run in their own child process,
// alternating svc, floor, svc, floor … on fresh temp data dirs; wrk drives each
// with the same ~1 KB body at 50 keep-alive connections. Prints req/s, p50, p99,
// CPU per request, the svc/floor ratio of the medians, svc's peak RSS, and checks
// that every 2xx'd request is a row in the database.
//
// Settings (env): BENCH_ROUNDS (2), BENCH_SECONDS (15), BENCH_WARMUP (3, seconds
// of wrk before each measured run, also checked), BENCH_CONNECTIONS (50),
// BENCH_THREADS (wrk threads, 1), BENCH_KEEP=1 keeps the temp dirs,
// BENCH_PERF=1 adds perf stat's software counters of each server per request,
// BENCH_ONLY=svc|floor runs one side, BENCH_WEBHOOK=1 subscribes a webhook on every
// svc's `simulated` events (an HTTPS receiver in this process, bench/webhook-receiver.ts), BENCH_NODE_ARGS extra node flags for the
// servers (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { spawnSync } from 'node:child_process';
import { startReceiver, subscribe, trustReceiver, type Receiver } from './webhook-receiver.ts';
import {
  cpuMs,
  machineSpeedMs,
  reportResult,
  perfStat,
  threadTimes,
  emailBody,
  env,
  fmt,
  runsFrom,
  machine,
  mb,
  median,
  runWrk,
  startServer,
  countRows,
  tempDir,
  verdict,
  wrkScript,
  type ServerKind,
  type WrkResult,
} from './lib.ts';

const ROUNDS = env.num('BENCH_ROUNDS', 2);
const SECONDS = env.num('BENCH_SECONDS', 15);
const WARMUP = env.num('BENCH_WARMUP', 3);
const CONNECTIONS = env.num('BENCH_CONNECTIONS', 50);
const THREADS = env.num('BENCH_THREADS', 1);
const ONLY = process.env.BENCH_ONLY as ServerKind | undefined;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

const TARGET = { ratio: 0.6, p99Ms: 20, rssMb: 250 };
const WEBHOOK = env.flag('BENCH_WEBHOOK');
// perf stat's software counters (syscalls, context switches, migrations, page faults) of the server.
const PERF = env.flag('BENCH_PERF');
const receiver = WEBHOOK ? await startReceiver() : undefined;
if (receiver) trustReceiver(receiver);

if (spawnSync('wrk', ['--version']).error) {
  console.error('wrk is not installed (Debian: apt-get install -y wrk)');
  process.exit(1);
}

interface Run {
  kind: ServerKind;
  round: number;
  wrk: WrkResult;
  warm: WrkResult;
  cpuMsPerReq: number;
  rows: number;
  hwmMb: number;
  sampledMaxMb: number;
  ok: boolean;
  problems: string[];
}

const body = JSON.stringify(emailBody());
const scriptDir = tempDir('wrk');
console.log(`bench:accept — ${machine()}, ${new Date().toISOString()}, servers run from ${runsFrom}`);
console.log(
  `POST /v1/emails, ${Buffer.byteLength(body)} B body, 3 recipients; wrk -t${THREADS} -c${CONNECTIONS}, ` +
    `${WARMUP}s warmup + ${SECONDS}s measured, ${ROUNDS} rounds alternating svc/floor`,
);

const runs: Run[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const kind of ['svc', 'floor'] as const) {
    if (ONLY && ONLY !== kind) continue;
    runs.push(await runOne(kind, round));
  }
}

/**
 * With BENCH_WEBHOOK=1: how many of the run's events reached the receiver while it
 * accepted, and how long after the load the rest took (svc holds webhooks back while
 * the accept is busy, decisions.md).
 */
async function drainWebhooks(r: Receiver, atLeast: number): Promise<void> {
  r.poll();
  const during = r.seen.size;
  const from = performance.now();
  const until = from + 120_000;
  while (r.seen.size < atLeast && performance.now() < until) {
    await new Promise((done) => setTimeout(done, 50));
    r.poll();
  }
  const after = (performance.now() - from) / 1000;
  console.log(
    `          webhooks: ${fmt(during)} events received while accepting, ${fmt(r.seen.size)} (of ≥ ${fmt(atLeast)}) ${fmt(after, 1)} s after the load`,
  );
  r.seen.clear();
}

async function runOne(kind: ServerKind, round: number): Promise<Run> {
  const server = await startServer(kind, NODE_ARGS);
  if (receiver && kind === 'svc') await subscribe(server.dataDir, receiver.port);
  const script = wrkScript(scriptDir, body, server.key);
  const url = `${server.url}/v1/emails`;
  const warm =
    WARMUP > 0 ? await runWrk({ url, script, seconds: WARMUP, connections: CONNECTIONS, threads: THREADS }) : null;
  server.rss.reset();
  const cpu0 = cpuMs(server.pid);
  const threads0 = threadTimes(server.pid);
  const started = performance.now();
  const speedMs = machineSpeedMs();
  let wrk!: Awaited<ReturnType<typeof runWrk>>;
  const measured = async () => {
    wrk = await runWrk({ url, script, seconds: SECONDS, connections: CONNECTIONS, threads: THREADS });
  };
  const counters = PERF ? await perfStat(server.pid, measured) : new Map<string, number>();
  if (!PERF) await measured();
  const cpu1 = cpuMs(server.pid);
  const threads = threadTimes(server.pid);
  const wallMs = performance.now() - started;
  if (receiver && kind === 'svc') await drainWebhooks(receiver, wrk.requests + (warm?.requests ?? 0));
  const { hwmKb, sampledMaxKb } = await server.stop();
  const table = kind === 'svc' ? 'emails' : 'floor_emails';
  const tables = kind === 'svc' ? [table, 'recipients', 'email_events'] : [table];
  const counts = countRows(server.dataDir, tables);
  const rows = counts[table]!;

  // Every 2xx must be a row; wrk stops with up to CONNECTIONS requests in flight, which may also have committed.
  const problems: string[] = [];
  const completed = wrk.requests + (warm?.requests ?? 0);
  const non2xx = wrk.non2xx + (warm?.non2xx ?? 0);
  const socketErrors = [wrk, warm].reduce(
    (n, r) => n + (r ? r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout : 0),
    0,
  );
  if (non2xx > 0) problems.push(`${non2xx} non-2xx responses`);
  if (socketErrors > 0) problems.push(`${socketErrors} socket errors`);
  if (rows < completed - non2xx) problems.push(`only ${rows} rows for ${completed - non2xx} 2xx responses`);
  if (rows > completed + 2 * CONNECTIONS) problems.push(`${rows} rows, more than ${completed} requests + in-flight`);
  if (kind === 'svc' && counts.recipients !== rows * 3)
    problems.push(`${counts.recipients} recipient rows, not 3 × ${rows}`);
  if (kind === 'svc' && counts.email_events !== rows) problems.push(`${counts.email_events} events, not ${rows}`);

  const run: Run = {
    kind,
    round,
    wrk,
    warm: warm ?? wrk,
    cpuMsPerReq: (cpu1 - cpu0) / wrk.requests,
    rows,
    hwmMb: mb(hwmKb),
    sampledMaxMb: mb(sampledMaxKb),
    ok: problems.length === 0,
    problems,
  };
  console.log(
    `  round ${round} ${kind.padEnd(5)} ${fmt(wrk.rps).padStart(7)} req/s  p50 ${fmt(wrk.p50Ms, 2).padStart(6)} ms  ` +
      `p99 ${fmt(wrk.p99Ms, 2).padStart(6)} ms  max ${fmt(wrk.maxMs, 1).padStart(6)} ms  ` +
      `cpu ${fmt(run.cpuMsPerReq * 1000).padStart(4)} µs/req  peak RSS ${fmt(run.hwmMb)} MB (sampled ${fmt(run.sampledMaxMb)})  ` +
      `rows ${fmt(rows)} / 2xx ${fmt(completed - non2xx)}  ${run.ok ? 'ok' : 'PROBLEM: ' + problems.join('; ')}`,
  );
  const per = (event: string) => fmt((counters.get(event) ?? NaN) / wrk.requests, 2);
  console.log(
    `          machine speed ${fmt(speedMs, 1)} ms (a fixed workload just before; lower is faster)` +
      (counters.size
        ? `; per request: ${per('raw_syscalls:sys_enter')} syscalls, ${per('context-switches')} context switches, ` +
          `${per('cpu-migrations')} migrations, ${per('page-faults')} page faults`
        : ''),
  );
  // Where svc's CPU went, per thread (µs per request): the accept is MainThread's. And how
  // MainThread spent the run: on a core, runnable but waiting for one, or off (blocked or idle).
  const perThread = [...threads]
    .map(([name, t]) => [name, ((t.cpu - (threads0.get(name)?.cpu ?? 0)) * 1000) / wrk.requests] as const)
    .filter(([, us]) => us >= 5)
    .sort((a, b) => b[1] - a[1]);
  const main = threads.get('MainThread') ?? { cpu: 0, runqueue: 0 };
  const main0 = threads0.get('MainThread') ?? { cpu: 0, runqueue: 0 };
  const pct = (ms: number) => `${fmt((100 * ms) / wallMs)} %`;
  const onCore = main.cpu - main0.cpu;
  const waiting = main.runqueue - main0.runqueue;
  console.log(
    `          threads: ${perThread.map(([n, us]) => `${n} ${fmt(us)}`).join(', ')} µs/req; MainThread on a core ${pct(onCore)}, ` +
      `waiting for one ${pct(waiting)}, off ${pct(wallMs - onCore - waiting)}`,
  );
  return run;
}

function summary(kind: ServerKind) {
  const rs = runs.filter((r) => r.kind === kind);
  if (rs.length === 0) return null;
  return {
    rps: median(rs.map((r) => r.wrk.rps)),
    p50: median(rs.map((r) => r.wrk.p50Ms)),
    p99: median(rs.map((r) => r.wrk.p99Ms)),
    worstP99: Math.max(...rs.map((r) => r.wrk.p99Ms)),
    cpu: median(rs.map((r) => r.cpuMsPerReq)),
    hwm: Math.max(...rs.map((r) => r.hwmMb)),
    ok: rs.every((r) => r.ok),
  };
}

const svc = summary('svc');
const floor = summary('floor');
console.log('\nmedians over rounds:');
for (const [name, s] of [
  ['svc', svc],
  ['floor', floor],
] as const) {
  if (!s) continue;
  console.log(
    `  ${name.padEnd(5)} ${fmt(s.rps).padStart(7)} req/s  p50 ${fmt(s.p50, 2)} ms  p99 ${fmt(s.p99, 2)} ms ` +
      `(worst ${fmt(s.worstP99, 2)})  cpu ${fmt(s.cpu * 1000)} µs/req  peak RSS ${fmt(s.hwm)} MB  ` +
      `rows ${s.ok ? 'all accounted for' : 'PROBLEM (see above)'}`,
  );
}
if (svc && floor) {
  const ratio = svc.rps / floor.rps;
  const perRound = runs
    .filter((r) => r.kind === 'svc')
    .map((s) => {
      const f = runs.find((r) => r.kind === 'floor' && r.round === s.round);
      return f ? fmt(s.wrk.rps / f.wrk.rps, 2) : '?';
    });
  console.log(
    `  ratio svc/floor ${fmt(ratio, 2)} (per round ${perRound.join(', ')}); ` +
      `CPU per request svc/floor ${fmt(svc.cpu / floor.cpu, 2)}×`,
  );
  console.log('\ntargets:');
  console.log(`  svc ≥ ${TARGET.ratio}× floor     ${fmt(ratio, 2)}×  ${verdict(ratio >= TARGET.ratio)}`);
  reportResult({
    name: 'accept',
    svc: svc.rps,
    peer: floor.rps,
    peerName: 'floor',
    unit: 'req/s',
    svcCpuUs: svc.cpu * 1000,
    peerCpuUs: floor.cpu * 1000,
    target: { ratio: TARGET.ratio },
    ok: svc.ok && floor.ok,
  });
}
if (svc) {
  if (!floor) console.log('\ntargets:');
  console.log(`  svc p99 ≤ ${TARGET.p99Ms} ms       ${fmt(svc.p99, 2)} ms  ${verdict(svc.p99 <= TARGET.p99Ms)}`);
  console.log(`  svc RSS ≤ ${TARGET.rssMb} MB      ${fmt(svc.hwm)} MB  ${verdict(svc.hwm <= TARGET.rssMb)}`);
  console.log(`  every 2xx is a row  ${verdict(svc.ok)}`);
}
process.exitCode = runs.every((r) => r.ok) ? 0 : 1;
if (receiver) {
  await receiver.close();
}
