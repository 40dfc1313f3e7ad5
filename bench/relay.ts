// npm run bench:relay — durable ingest over SMTP: svc's relay against Postfix.
//
// The same ~5 KB message (the multipart text + HTML message of bench:deliver, one
// recipient) is sent BENCH_MESSAGES times over BENCH_SESSIONS concurrent SMTP
// sessions by bench/smtp-load.ts (smtp-source's pattern: one connection per session,
// MAIL, RCPT and DATA pipelined, the next message after the 250; plus AUTH PLAIN,
// which smtp-source cannot do). Both servers answer 250 only once the message is on
// disk:
// - svc (`svc serve`, its own child process, a TEST key, so nothing is delivered):
//   parsed, accepted through the send use case, group-committed (synchronous=FULL);
// - Postfix (a throwaway instance under a temp dir): smtpd and cleanup write the
//   queue file and fsync it before the 250; every message goes to the hold queue
//   (`check_client_access static:HOLD`), so Postfix ingests and never delivers.
// Rounds alternate svc, Postfix, … on fresh instances; each run has a warmup of
// BENCH_WARMUP messages first. Afterwards every 250 is checked against the store
// (svc's emails table, Postfix's hold queue).
//
// Settings (env): BENCH_MESSAGES (10000), BENCH_SESSIONS (20), BENCH_WARMUP (1000),
// BENCH_ROUNDS (2), BENCH_ONLY=svc|postfix, BENCH_DIST=1 (svc from the bundle),
// BENCH_NODE_ARGS (extra node flags for svc, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countRows, env, fmt, freePort, machine, median, reportResult, startServer, tempDir, verdict } from './lib.ts';
import { machineTicks, missingTools, procCpuMs, startPostfix, treeCpuMs, track } from './deliver-peers.ts';
import { wireMessage } from './deliver-svc.ts';

const MESSAGES = env.num('BENCH_MESSAGES', 10_000);
const SESSIONS = env.num('BENCH_SESSIONS', 20);
const WARMUP = env.num('BENCH_WARMUP', 1000);
const ROUNDS = env.num('BENCH_ROUNDS', 2);
const ONLY = process.env.BENCH_ONLY as 'svc' | 'postfix' | undefined;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const TARGET_RATIO = 3;
const RCPT = 'user@dest.test';

interface Load {
  ok: number;
  refused: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  bytes: number;
}

interface Run {
  kind: 'svc' | 'postfix';
  load: Load;
  cpuUsPerMsg: number;
  machineBusy: number;
  stored: number;
  answered: number;
}

/** bench/smtp-load.ts in its own process, so its CPU is not the server's. */
function load(port: number, messages: number, file: string, key?: string): Promise<Load> {
  const args = ['--import', 'tsx', 'bench/smtp-load.ts', String(port), String(SESSIONS), String(messages), file];
  if (key) args.push(key);
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Load) : reject(new Error(`smtp-load exited with ${code}`)),
    ),
  );
}

async function measure(
  kind: Run['kind'],
  port: number,
  cpu: () => number,
  file: string,
  key?: string,
): Promise<Omit<Run, 'stored'>> {
  const warm = await load(port, WARMUP, file, key);
  const cpu0 = cpu();
  const m0 = machineTicks();
  const run = await load(port, MESSAGES, file, key);
  const m1 = machineTicks();
  const cpuMs = cpu() - cpu0;
  return {
    kind,
    load: run,
    cpuUsPerMsg: (cpuMs * 1000) / Math.max(1, run.ok),
    machineBusy: (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total),
    answered: warm.ok + run.ok,
  };
}

async function runSvc(file: string): Promise<Run> {
  const smtpPort = await freePort();
  const server = await startServer('svc', NODE_ARGS, smtpPort);
  try {
    const r = await measure('svc', smtpPort, () => procCpuMs(server.pid), file, server.key);
    await server.stop();
    const stored = countRows(server.dataDir, ['emails']).emails!;
    return { ...r, stored };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

async function runPostfix(file: string): Promise<Run> {
  // No delivery happens (hold); the relayhost is never contacted.
  const postfix = await startPostfix(9, { hold: true });
  try {
    const r = await measure('postfix', postfix.port, () => treeCpuMs(postfix.masterPid()), file);
    const stored = postfix.held();
    return { ...r, stored };
  } finally {
    await postfix.stop();
  }
}

function show(r: Run): void {
  const l = r.load;
  console.log(
    `  ${r.kind.padEnd(7)} ${fmt(l.perSecond).padStart(6)} msgs/s  p50 ${fmt(l.p50, 1)} ms  p99 ${fmt(l.p99, 1)} ms  ` +
      `CPU ${fmt(r.cpuUsPerMsg)} µs/msg  machine ${fmt(r.machineBusy * 100)} % busy  ` +
      `refused ${l.refused}  stored ${r.stored}/${r.answered}`,
  );
}

const missing = missingTools();
if (missing && ONLY !== 'svc') {
  console.error(missing);
  process.exit(2);
}
const dir = tempDir('relay');
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const wire = (await wireMessage(0, privateKey)).toString('utf8').replace(/^To: .*(\r\n[ \t].*)*/m, `To: ${RCPT}`);
const file = join(dir, 'message.eml');
writeFileSync(file, wire);
console.log(`bench:relay  ${machine()}`);
console.log(
  `  ${MESSAGES} messages of ${fmt(Buffer.byteLength(wire) / 1024, 1)} KB, 1 recipient, ${SESSIONS} sessions, ` +
    `warmup ${WARMUP}, ${ROUNDS} round(s)`,
);

const runs: Run[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of ['svc', 'postfix'] as const) {
    if (ONLY && ONLY !== kind) continue;
    const r = kind === 'svc' ? await runSvc(file) : await runPostfix(file);
    show(r);
    runs.push(r);
  }
}

const of = (kind: Run['kind']) => runs.filter((r) => r.kind === kind);
const svc = median(of('svc').map((r) => r.load.perSecond));
const postfix = median(of('postfix').map((r) => r.load.perSecond));
const allStored = runs.every((r) => r.stored >= r.answered && r.load.refused === 0);
if (!ONLY) {
  const ratio = svc / postfix;
  console.log(
    `\n  median: svc ${fmt(svc)} msgs/s, Postfix ${fmt(postfix)} msgs/s: ${fmt(ratio, 2)}× ` +
      `(target ≥ ${TARGET_RATIO}×) ${verdict(ratio >= TARGET_RATIO)}`,
  );
  reportResult({
    name: 'relay',
    svc,
    peer: postfix,
    peerName: 'Postfix',
    unit: 'msgs/s',
    svcCpuUs: median(of('svc').map((r) => r.cpuUsPerMsg)),
    peerCpuUs: median(of('postfix').map((r) => r.cpuUsPerMsg)),
    target: { ratio: TARGET_RATIO },
    ok: allStored,
  });
}
console.log(`  every 250 stored: ${verdict(allStored)}`);
process.exit(allStored ? 0 : 1);
