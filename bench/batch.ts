// npm run bench:batch — POST /v1/emails/batch throughput: emails accepted per second.
//
// svc and its floor (bench/floor-server.ts: one row per email, a batch in one
// group-committed write, fields checked by hand) each run in their own child
// process on fresh temp data dirs, alternating svc, floor, svc, floor …; a few
// keep-alive clients in this process (undici Pool, one request in flight per
// connection) post batches of 100 (~1 KB each, 3 recipients) as fast as they are
// answered. Prints emails/s, p50/p99 per batch request, CPU per email, peak RSS
// and the svc/floor ratio, and checks that each database holds exactly the
// accepted emails.
//
// Settings (env): BENCH_ROUNDS (2, each on fresh servers), BENCH_SECONDS (10),
// BENCH_WARMUP (2), BENCH_CLIENTS (4), BENCH_BATCH (100), BENCH_ONLY=svc|floor
// runs one side, BENCH_KEEP=1 keeps the temp dirs, BENCH_NODE_ARGS extra node
// flags for the servers.
import { Pool } from 'undici';
import {
  cpuMs,
  reportResult,
  emailBody,
  env,
  fmt,
  runsFrom,
  machine,
  mb,
  median,
  percentile,
  startServer,
  countRows,
  verdict,
} from './lib.ts';

const ROUNDS = env.num('BENCH_ROUNDS', 2);
const SECONDS = env.num('BENCH_SECONDS', 10);
const WARMUP = env.num('BENCH_WARMUP', 2);
const CLIENTS = env.num('BENCH_CLIENTS', 4);
const BATCH = env.num('BENCH_BATCH', 100);
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const KINDS = (['svc', 'floor'] as const).filter((k) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY === k);
const TARGET = { emailsPerSecond: 20_000 };

// Distinct bodies (order numbers differ), like a real batch; the same batch is reused by every request.
const body = JSON.stringify({ emails: Array.from({ length: BATCH }, (_, i) => emailBody(i)) });

interface Phase {
  requests: number;
  accepted: number;
  failedItems: number;
  errors: string[];
  latenciesMs: number[];
  seconds: number;
}

async function drive(pool: Pool, key: string, seconds: number): Promise<Phase> {
  const phase: Phase = { requests: 0, accepted: 0, failedItems: 0, errors: [], latenciesMs: [], seconds: 0 };
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await pool.request({
        method: 'POST',
        path: '/v1/emails/batch',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body,
      });
      const text = await res.body.text();
      phase.latenciesMs.push(performance.now() - t0);
      phase.requests++;
      if (res.statusCode !== 202) {
        if (phase.errors.length < 5) phase.errors.push(`${res.statusCode} ${text.slice(0, 200)}`);
        continue;
      }
      const { data } = JSON.parse(text) as { data: { accepted_count: number; failed_count: number } };
      phase.accepted += data.accepted_count;
      phase.failedItems += data.failed_count;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  // Every client has its answer: the phase ends when the last one returns.
  phase.seconds = (performance.now() - start) / 1000;
  return phase;
}

interface Run {
  kind: 'svc' | 'floor';
  round: number;
  emailsPerSecond: number;
  p50: number;
  p99: number;
  cpuUsPerEmail: number;
  hwmMb: number;
  ok: boolean;
}

console.log(`bench:batch — ${machine()}, ${new Date().toISOString()}, svc runs from ${runsFrom}`);
console.log(
  `POST /v1/emails/batch, ${BATCH} emails of ~${Math.round(Buffer.byteLength(body) / BATCH)} B (3 recipients) per request ` +
    `(${fmt(Buffer.byteLength(body) / 1024)} KB), ${CLIENTS} keep-alive clients, ${WARMUP}s warmup + ${SECONDS}s measured, ` +
    `${ROUNDS} rounds`,
);

const runs: Run[] = [];
async function measure(kind: 'svc' | 'floor', round: number): Promise<Run> {
  const server = await startServer(kind, NODE_ARGS);
  const pool = new Pool(server.url, { connections: CLIENTS, pipelining: 1, keepAliveTimeout: 60_000 });
  const warm = WARMUP > 0 ? await drive(pool, server.key, WARMUP) : null;
  server.rss.reset();
  const cpu0 = cpuMs(server.pid);
  const m = await drive(pool, server.key, SECONDS);
  const cpu1 = cpuMs(server.pid);
  await pool.close();
  const { hwmKb } = await server.stop();
  const table = kind === 'svc' ? 'emails' : 'floor_emails';
  const rows = countRows(server.dataDir, kind === 'svc' ? [table, 'recipients'] : [table]);

  const accepted = m.accepted + (warm?.accepted ?? 0);
  const problems = [...(warm?.errors ?? []), ...m.errors];
  const failed = m.failedItems + (warm?.failedItems ?? 0);
  if (failed > 0) problems.push(`${failed} batch items failed`);
  if (rows[table] !== accepted) problems.push(`${rows[table]} rows in ${table} for ${accepted} accepted`);
  if (kind === 'svc' && rows.recipients !== accepted * 3)
    problems.push(`${rows.recipients} recipient rows, not 3 × ${accepted}`);
  const run: Run = {
    kind,
    round,
    emailsPerSecond: m.accepted / m.seconds,
    p50: percentile(m.latenciesMs, 50),
    p99: percentile(m.latenciesMs, 99),
    cpuUsPerEmail: ((cpu1 - cpu0) * 1000) / m.accepted,
    hwmMb: mb(hwmKb),
    ok: problems.length === 0,
  };
  console.log(
    `  round ${round} ${kind.padEnd(5)} ${fmt(run.emailsPerSecond).padStart(6)} emails/s  (${fmt(m.requests / m.seconds, 1)} batches/s)  ` +
      `p50 ${fmt(run.p50, 1)} ms  p99 ${fmt(run.p99, 1)} ms per batch  cpu ${fmt(run.cpuUsPerEmail)} µs/email  ` +
      `peak RSS ${fmt(run.hwmMb)} MB  rows ${fmt(rows[table] ?? 0)} / accepted ${fmt(accepted)}  ` +
      (run.ok ? 'ok' : 'PROBLEM: ' + problems.join('; ')),
  );
  return run;
}

for (let round = 1; round <= ROUNDS; round++) for (const kind of KINDS) runs.push(await measure(kind, round));

const summary = (kind: 'svc' | 'floor') => {
  const of = runs.filter((r) => r.kind === kind);
  if (of.length === 0) return undefined;
  return {
    eps: median(of.map((r) => r.emailsPerSecond)),
    p50: median(of.map((r) => r.p50)),
    p99: median(of.map((r) => r.p99)),
    cpu: median(of.map((r) => r.cpuUsPerEmail)),
    hwm: Math.max(...of.map((r) => r.hwmMb)),
  };
};
console.log('\nmedians over rounds:');
for (const kind of KINDS) {
  const x = summary(kind)!;
  console.log(
    `  ${kind.padEnd(5)} ${fmt(x.eps)} emails/s, p50 ${fmt(x.p50, 1)} ms, p99 ${fmt(x.p99, 1)} ms per batch, ` +
      `cpu ${fmt(x.cpu)} µs/email, peak RSS ${fmt(x.hwm)} MB`,
  );
}
const svc = summary('svc');
const floor = summary('floor');
if (svc && floor) {
  const perRound = runs
    .filter((r) => r.kind === 'svc')
    .map((s) => {
      const f = runs.find((r) => r.kind === 'floor' && r.round === s.round);
      return f ? fmt(s.emailsPerSecond / f.emailsPerSecond, 2) : '-';
    });
  console.log(
    `  ratio svc/floor ${fmt(svc.eps / floor.eps, 2)} (per round ${perRound.join(', ')}); ` +
      `CPU per email svc/floor ${fmt(svc.cpu / floor.cpu, 2)}×`,
  );
  reportResult({
    name: 'batch',
    svc: svc.eps,
    peer: floor.eps,
    peerName: 'floor',
    unit: 'emails/s',
    svcCpuUs: svc.cpu,
    peerCpuUs: floor.cpu,
    target: { min: TARGET.emailsPerSecond },
    ok: runs.every((r) => r.ok),
  });
}
console.log('\ntargets:');
if (svc)
  console.log(
    `  ≥ ${fmt(TARGET.emailsPerSecond)} emails/s   ${fmt(svc.eps)}  ${verdict(svc.eps >= TARGET.emailsPerSecond)}`,
  );
console.log(`  every accepted email is a row  ${verdict(runs.every((r) => r.ok))}`);
process.exitCode = runs.every((r) => r.ok) ? 0 : 1;
