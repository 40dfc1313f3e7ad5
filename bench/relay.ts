// npm run bench:relay — durable ingest over SMTP: svc's relay against Postfix.
//
// The same ~5 KB message (the multipart text + HTML message of bench:deliver, with
// BENCH_RCPTS recipients at dest.test) is sent BENCH_MESSAGES times over
// BENCH_SESSIONS concurrent SMTP sessions by bench/smtp-load.ts (smtp-source's
// pattern: one connection per session, the next message after the 250; plus AUTH
// PLAIN, which smtp-source cannot do). Both servers answer 250 only once the message
// is on disk. Two ways (BENCH_KEY):
// - TEST (the default: ingest only, 1 recipient, MAIL, RCPT and DATA pipelined):
//   svc (`svc serve`, its own child process) takes the message with its first TEST
//   key, so nothing is delivered: read for its fields, accepted as written through the send use case,
//   group-committed (synchronous=FULL). Postfix (a throwaway instance under a temp
//   dir): smtpd and cleanup write the queue file and fsync it before the 250; every
//   message goes to the hold queue (`check_client_access static:HOLD`), never delivered.
// - LIVE (3 recipients, each command waiting for its reply, as issue 33 describes it):
//   svc (bench:deliver's setup: a verified sending domain with an RSA-2048 DKIM key, a
//   LIVE key, the loopback DNS server) delivers while it ingests, to Postfix's
//   smtp-sink; Postfix relays to the same sink (relayhost, no signing). After the
//   warmup both are let drain before the measured run; after it, the run waits until
//   the sink has every message, and reports how many had arrived when the last 250 came.
// Rounds alternate svc, Postfix, … on fresh instances; each run has a warmup of
// BENCH_WARMUP messages first. Afterwards every 250 is checked against the store
// (TEST: svc's emails table, Postfix's hold queue; LIVE: svc's DELIVERED recipients,
// Postfix's `status=sent` log lines and empty queue, the sink's count).
// CPU per message: svc's process (all threads), Postfix's master and its children.
// TARGET_RATIO (ingest, svc/Postfix) is issue 33's 1.5 (issue 14 had set 3).
//
// Settings (env): BENCH_KEY=TEST|LIVE, BENCH_RCPTS (TEST 1, LIVE 3), BENCH_PIPELINING=1|0
// (TEST 1, LIVE 0), BENCH_MESSAGES (10000), BENCH_SESSIONS (20), BENCH_WARMUP (1000),
// BENCH_ROUNDS (2), BENCH_ONLY=svc|postfix, BENCH_DIST=1 (svc from the bundle),
// BENCH_NODE_ARGS (extra node flags for svc, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countRows, env, fmt, freePort, machine, median, reportResult, startServer, tempDir, verdict } from './lib.ts';
import {
  machineTicks,
  missingTools,
  ownTempDir,
  procCpuMs,
  removeDir,
  startPostfix,
  startSink,
  treeCpuMs,
  track,
  type Sink,
} from './deliver-peers.ts';
import {
  buildDist,
  DEST_DOMAIN,
  prepareDataDir,
  SENDER_DOMAIN,
  startBenchDns,
  startSvc,
  statusCounts,
  wireMessage,
} from './deliver-svc.ts';

const KEY = (process.env.BENCH_KEY ?? 'TEST').toUpperCase();
if (KEY !== 'TEST' && KEY !== 'LIVE') throw new Error(`BENCH_KEY must be TEST or LIVE, got ${KEY}`);
const LIVE = KEY === 'LIVE';
const RCPTS = env.num('BENCH_RCPTS', LIVE ? 3 : 1);
const PIPELINING = process.env.BENCH_PIPELINING ? env.flag('BENCH_PIPELINING') : !LIVE;
const MESSAGES = env.num('BENCH_MESSAGES', 10_000);
const SESSIONS = env.num('BENCH_SESSIONS', 20);
const WARMUP = env.num('BENCH_WARMUP', 1000);
const ROUNDS = env.num('BENCH_ROUNDS', 2);
const ONLY = process.env.BENCH_ONLY as 'svc' | 'postfix' | undefined;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const TARGET_RATIO = 1.5;
/** A LIVE run fails when the sink's count does not move for this long. */
const STALL_MS = 60_000;
const FROM = `notifications@${SENDER_DOMAIN}`;
const RECIPIENTS =
  RCPTS === 1 ? [`user@${DEST_DOMAIN}`] : Array.from({ length: RCPTS }, (_, i) => `user${i + 1}@${DEST_DOMAIN}`);

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
  /** LIVE: messages at the sink when the last 250 came, seconds from then until all were, CPU µs per message until then. */
  deliveredInRun?: number;
  drainSeconds?: number;
  cpuUsToDelivered?: number;
  problems: string[];
}

/** One server under load: its SMTP port, its CPU so far, and its store's account of the messages it took. */
interface Target {
  kind: Run['kind'];
  port: number;
  key?: string;
  cpu(): number;
  /** Sink transactions per message: svc sends one per recipient (its signed return paths), Postfix one with every RCPT. */
  perMessage: number;
  /** Stops the server; how many of `answered` are in its store (LIVE: delivered), and what is wrong. */
  finish(answered: number): Promise<{ stored: number; problems: string[] }>;
  stop(): Promise<void>;
}

/** bench/smtp-load.ts in its own process, so its CPU is not the server's. */
function load(port: number, messages: number, file: string, key?: string): Promise<Load> {
  const args = ['--import', 'tsx', 'bench/smtp-load.ts', String(port), String(SESSIONS), String(messages), file];
  if (key) args.push(key);
  args.push('--from', FROM, '--to', RECIPIENTS.join(','), ...(PIPELINING ? [] : ['--no-pipelining']));
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Load) : reject(new Error(`smtp-load exited with ${code}`)),
    ),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the sink has counted `want` transactions; fails when it stops moving for STALL_MS. */
async function untilSunk(sink: Sink, want: number, label: string): Promise<void> {
  let last = -1;
  let lastMove = performance.now();
  for (;;) {
    const got = sink.count();
    if (got >= want) return;
    if (got !== last) [last, lastMove] = [got, performance.now()];
    if (performance.now() - lastMove > STALL_MS) throw new Error(`${label}: the sink stalled at ${got}/${want}`);
    await sleep(5);
  }
}

/** Reads every 100 ms, for up to 30 s, until `done` (a store records a delivery just after the sink counts it). */
async function settle<T>(read: () => T, done: (t: T) => boolean): Promise<T> {
  let t = read();
  for (let i = 0; i < 300 && !done(t); i++) {
    await sleep(100);
    t = read();
  }
  return t;
}

async function measure(t: Target, file: string, sink?: Sink): Promise<Run> {
  const sunk0 = sink?.count() ?? 0;
  const warm = await load(t.port, WARMUP, file, t.key);
  // LIVE: the measured run starts with the warmup delivered.
  if (sink) await untilSunk(sink, sunk0 + warm.ok * t.perMessage, `${t.kind} warmup`);
  const sunk1 = sink?.count() ?? 0;
  const cpu0 = t.cpu();
  const m0 = machineTicks();
  const run = await load(t.port, MESSAGES, file, t.key);
  const m1 = machineTicks();
  const cpuMs = t.cpu() - cpu0;
  const live: Pick<Run, 'deliveredInRun' | 'drainSeconds' | 'cpuUsToDelivered'> = {};
  if (sink) {
    const ended = performance.now();
    live.deliveredInRun = Math.floor((sink.count() - sunk1) / t.perMessage);
    await untilSunk(sink, sunk1 + run.ok * t.perMessage, t.kind);
    live.drainSeconds = (performance.now() - ended) / 1000;
    live.cpuUsToDelivered = ((t.cpu() - cpu0) * 1000) / Math.max(1, run.ok);
  }
  const answered = warm.ok + run.ok;
  const { stored, problems } = await t.finish(answered);
  if (sink) {
    await sleep(500); // anything sent twice would reach the sink by now
    const extra = sink.count() - sunk0 - answered * t.perMessage;
    if (extra !== 0) problems.push(`the sink got ${extra} transactions more than expected`);
  }
  return {
    kind: t.kind,
    load: run,
    cpuUsPerMsg: (cpuMs * 1000) / Math.max(1, run.ok),
    machineBusy: (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total),
    answered,
    stored,
    ...live,
    problems,
  };
}

/** TEST: `svc serve` with its first TEST key; every 250 is a row of `emails` once it stopped. */
async function svcTest(): Promise<Target> {
  const port = await freePort();
  const server = await startServer('svc', NODE_ARGS, port);
  let stopped: Promise<unknown> | undefined;
  const stop = async () => void (await (stopped ??= server.stop()));
  return {
    kind: 'svc',
    port,
    key: server.key,
    perMessage: RCPTS,
    cpu: () => procCpuMs(server.pid),
    async finish(answered) {
      await stop();
      const stored = countRows(server.dataDir, ['emails']).emails!;
      return { stored, problems: stored < answered ? [`${answered - stored} answered emails not stored`] : [] };
    },
    stop,
  };
}

/** LIVE: bench:deliver's data dir and `svc serve`, its relay on a free port; every 250 a DELIVERED email. */
async function svcLive(live: Live): Promise<Target> {
  const dir = ownTempDir('relay-svc');
  const dataDir = join(dir, 'data');
  const key = await prepareDataDir(dataDir, live.dkim);
  const port = await freePort();
  const svc = await startSvc({
    entry: live.dist?.main,
    dataDir,
    dnsServer: live.dns,
    mxPort: live.sink.port,
    nodeArgs: NODE_ARGS,
    // After startSvc's own `--smtp-port 0`: the last one counts.
    extraArgs: ['--smtp-port', String(port)],
  });
  const stop = async () => {
    await svc.stop();
    removeDir(dir);
  };
  return {
    kind: 'svc',
    port,
    key,
    perMessage: RCPTS,
    cpu: () => procCpuMs(svc.pid),
    async finish(answered) {
      const counts = await settle(
        () => statusCounts(dataDir),
        (c) => (c.recipients.DELIVERED ?? 0) >= answered * RCPTS,
      );
      const code = await svc.stop();
      const problems = code === 0 ? [] : [`svc exited with ${code}`];
      const delivered = counts.emails.DELIVERED ?? 0;
      if (delivered !== answered) problems.push(`emails by status ${JSON.stringify(counts.emails)}`);
      if ((counts.recipients.DELIVERED ?? 0) !== answered * RCPTS)
        problems.push(`recipients by status ${JSON.stringify(counts.recipients)}`);
      await stop();
      return { stored: delivered, problems };
    },
    stop,
  };
}

/** A throwaway Postfix: TEST holds every message, LIVE relays it to the sink. */
async function postfix(live?: Live): Promise<Target> {
  // TEST: no delivery happens (hold); the relayhost is never contacted.
  const pf = await startPostfix(live?.sink.port ?? 9, { hold: !live });
  const master = pf.masterPid();
  return {
    kind: 'postfix',
    port: pf.port,
    perMessage: 1,
    cpu: () => treeCpuMs(master),
    async finish(answered) {
      const problems: string[] = [];
      let stored: number;
      if (live) {
        const tally = await settle(
          () => pf.tally(),
          (t) => t.sent >= answered * RCPTS && t.queued === 0,
        );
        stored = Math.floor(tally.sent / RCPTS);
        if (tally.sent !== answered * RCPTS) problems.push(`${tally.sent} recipients sent, not ${answered * RCPTS}`);
        if (tally.queued !== 0) problems.push(`${tally.queued} messages left in the queue`);
      } else {
        stored = pf.held();
        if (stored < answered) problems.push(`${answered - stored} answered messages not held`);
      }
      await pf.stop();
      return { stored, problems };
    },
    stop: () => pf.stop(),
  };
}

async function runOne(kind: Run['kind'], file: string, live?: Live): Promise<Run> {
  const t = kind === 'postfix' ? await postfix(live) : live ? await svcLive(live) : await svcTest();
  try {
    return await measure(t, file, live?.sink);
  } finally {
    await t.stop();
  }
}

function show(r: Run): void {
  const l = r.load;
  console.log(
    `  ${r.kind.padEnd(7)} ${fmt(l.perSecond).padStart(6)} msgs/s  p50 ${fmt(l.p50, 1)} ms  p99 ${fmt(l.p99, 1)} ms  ` +
      `CPU ${fmt(r.cpuUsPerMsg)} µs/msg  machine ${fmt(r.machineBusy * 100)} % busy  ` +
      `refused ${l.refused}  ${LIVE ? 'delivered' : 'stored'} ${r.stored}/${r.answered}` +
      (r.problems.length ? `  PROBLEM: ${r.problems.join('; ')}` : ''),
  );
  if (r.deliveredInRun !== undefined)
    console.log(
      `          at the sink when the last 250 came: ${fmt(r.deliveredInRun)}/${fmt(l.ok)}, all ` +
        `${fmt(r.drainSeconds!, 1)} s later; CPU to delivered ${fmt(r.cpuUsToDelivered!)} µs/msg`,
    );
}

interface Live {
  sink: Sink;
  dns: string;
  dkim: ReturnType<typeof generateKeyPairSync>;
  dist?: { main: string } | undefined;
}

const missing = missingTools();
if (missing && (ONLY !== 'svc' || LIVE)) {
  console.error(missing);
  process.exit(2);
}
const dir = tempDir('relay');
const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
const wire = (await wireMessage(0, dkim.privateKey))
  .toString('utf8')
  .replace(/^To: .*(\r\n[ \t].*)*/m, `To: ${RECIPIENTS.join(', ')}`);
const file = join(dir, 'message.eml');
writeFileSync(file, wire);
let live: Live | undefined;
const closers: (() => Promise<unknown>)[] = [];
if (LIVE) {
  const dist = env.flag('BENCH_DIST') && ONLY !== 'postfix' ? await buildDist() : undefined;
  if (dist) closers.push(() => Promise.resolve(dist.remove()));
  const dns = await startBenchDns(dkim.publicKey);
  const sink = await startSink(ownTempDir('relay-sink'));
  closers.push(
    () => sink.stop(),
    () => dns.close(),
  );
  live = { sink, dns: dns.server, dkim, dist };
}
console.log(`bench:relay  ${machine()}, ${new Date().toISOString()}`);
console.log(
  `  ${KEY} key (${LIVE ? 'delivery running, svc and Postfix to one smtp-sink' : 'ingest only'}), ` +
    `${MESSAGES} messages of ${fmt(Buffer.byteLength(wire) / 1024, 1)} KB, ${RCPTS} recipient(s) at ${DEST_DOMAIN}, ` +
    `${SESSIONS} sessions, ${PIPELINING ? 'MAIL/RCPT/DATA pipelined' : 'one command at a time'}, ` +
    `warmup ${WARMUP}, ${ROUNDS} round(s)`,
);

const runs: Run[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['svc', 'postfix'] as const) {
      if (ONLY && ONLY !== kind) continue;
      const r = await runOne(kind, file, live);
      show(r);
      runs.push(r);
    }
  }
} finally {
  for (const close of closers) await close();
}

const of = (kind: Run['kind']) => runs.filter((r) => r.kind === kind);
const med = (kind: Run['kind'], f: (r: Run) => number) => median(of(kind).map(f));
const svc = med('svc', (r) => r.load.perSecond);
const pf = med('postfix', (r) => r.load.perSecond);
const svcCpu = med('svc', (r) => r.cpuUsPerMsg);
const pfCpu = med('postfix', (r) => r.cpuUsPerMsg);
const allStored = runs.every((r) => r.stored >= r.answered && r.load.refused === 0 && r.problems.length === 0);
if (!ONLY) {
  const ratio = svc / pf;
  console.log(
    `\n  median: svc ${fmt(svc)} msgs/s, Postfix ${fmt(pf)} msgs/s: ${fmt(ratio, 2)}× ` +
      `(target ≥ ${TARGET_RATIO}×) ${verdict(ratio >= TARGET_RATIO)}`,
  );
  console.log(
    `  CPU per message during the ingest: svc ${fmt(svcCpu)} µs, Postfix ${fmt(pfCpu)} µs (${fmt(svcCpu / pfCpu, 2)}×)`,
  );
  if (LIVE) {
    const svcAll = med('svc', (r) => r.cpuUsToDelivered!);
    const pfAll = med('postfix', (r) => r.cpuUsToDelivered!);
    console.log(
      `  CPU per message until delivered: svc ${fmt(svcAll)} µs, Postfix ${fmt(pfAll)} µs (${fmt(svcAll / pfAll, 2)}×)`,
    );
  }
  reportResult({
    name: LIVE ? 'relay-live' : 'relay',
    svc,
    peer: pf,
    peerName: 'Postfix',
    unit: 'msgs/s',
    svcCpuUs: svcCpu,
    peerCpuUs: pfCpu,
    target: { ratio: TARGET_RATIO },
    ok: allStored,
  });
}
console.log(`  every 250 stored${LIVE ? ' and delivered' : ''}: ${verdict(allStored)}`);
process.exit(allStored ? 0 : 1);
