// npm run bench:check — the hot paths beside their peers, short, in one go: accept
// (bench:accept, one round of 5 s each against its floor), batch (bench:batch, likewise)
// deliver (bench:deliver, 2,000 messages against Postfix, when Postfix is installed) and
// relay (bench:relay, 2,000 messages over SMTP against Postfix's ingest).
// Prints one line per benchmark (svc, peer, ratio, CPU per unit of work, target) and the
// machine-speed index taken before and after, so a change's figures can be recorded
// beside the hour they were taken in (docs/performance.md). Exit 1 when a benchmark
// found lost or undelivered mail, or failed to run; a missed ratio is printed, not fatal
// (the machine is shared: compare ratios, alternate variants).
//
// Settings (env): BENCH_SECONDS (5), BENCH_MESSAGES (2000), BENCH_SKIP (comma list of
// accept, batch, deliver, relay), BENCH_DIST=1 as the benchmarks take it.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { env, fmt, machine, machineSpeedMs, ROOT, tempDir, verdict, type BenchResult } from './lib.ts';

const SECONDS = env.num('BENCH_SECONDS', 5);
const MESSAGES = env.num('BENCH_MESSAGES', 2000);
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));

const benches: { name: string; script: string; env: Record<string, string>; tsx: boolean }[] = [
  { name: 'accept', script: 'bench/accept.ts', env: { BENCH_SECONDS: String(SECONDS), BENCH_WARMUP: '1' }, tsx: true },
  { name: 'batch', script: 'bench/batch.ts', env: { BENCH_SECONDS: String(SECONDS), BENCH_WARMUP: '1' }, tsx: true },
  { name: 'deliver', script: 'bench/deliver.ts', env: { BENCH_MESSAGES: String(MESSAGES) }, tsx: false },
  {
    name: 'relay',
    script: 'bench/relay.ts',
    env: { BENCH_MESSAGES: String(MESSAGES), BENCH_WARMUP: String(Math.round(MESSAGES / 10)) },
    tsx: true,
  },
];

const dir = tempDir('check');
const speedBefore = machineSpeedMs();
const results: { name: string; result?: BenchResult; code: number | null }[] = [];
for (const b of benches) {
  if (SKIP.has(b.name)) continue;
  const file = join(dir, `${b.name}.json`);
  const args = [...(b.tsx ? ['--import', 'tsx'] : []), b.script];
  process.stdout.write(`running bench:${b.name} …\n`);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, BENCH_ROUNDS: '1', ...b.env, BENCH_RESULT_FILE: file },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  const result = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchResult) : undefined;
  results.push({ name: b.name, code, ...(result ? { result } : {}) });
}
const speedAfter = machineSpeedMs();
rmSync(dir, { recursive: true, force: true });

console.log(`\nbench:check — ${machine()}, ${new Date().toISOString()}`);
console.log(
  `machine speed ${fmt(speedBefore, 1)} ms before, ${fmt(speedAfter, 1)} ms after (a fixed workload; lower is faster)\n`,
);
for (const { name, result: r, code } of results) {
  if (!r) {
    console.log(`  ${name.padEnd(8)} no result (exit ${code}; a peer missing? run npm run bench:${name} to see)`);
    continue;
  }
  const ratio = r.svc / r.peer;
  const met = 'ratio' in r.target ? ratio >= r.target.ratio : r.svc >= r.target.min;
  const target = 'ratio' in r.target ? `≥ ${r.target.ratio}× ${r.peerName}` : `≥ ${fmt(r.target.min)} ${r.unit}`;
  console.log(
    `  ${name.padEnd(8)} svc ${fmt(r.svc).padStart(7)} ${r.unit}, ${r.peerName} ${fmt(r.peer)}: ` +
      `${fmt(ratio, 2)}×; CPU ${fmt(r.svcCpuUs)} vs ${fmt(r.peerCpuUs)} µs (${fmt(r.svcCpuUs / r.peerCpuUs, 2)}×); ` +
      `target ${target} ${verdict(met)}; ${r.ok ? 'nothing lost' : 'PROBLEM: lost or undelivered mail'}`,
  );
}
process.exitCode = results.every((r) => r.result?.ok && r.code === 0) ? 0 : 1;
