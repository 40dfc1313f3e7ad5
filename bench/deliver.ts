// npm run bench:deliver — end-to-end delivery throughput: svc against Postfix.
//
// svc: 10,000 LIVE emails (~5 KB, 3 recipients at one domain, DKIM RSA-2048)
// posted to the Public API by 20 concurrent keep-alive clients (undici Pool, one
// request in flight per connection); svc (`node src/main.ts serve`, its own child
// process) resolves the domain's MX through a loopback DNS server
// (test/peers/dns.ts in this process) and delivers to Postfix's smtp-sink.
// Postfix: a throwaway instance under a temp dir relays the same number of
// messages (the same ~5 KB message as svc composes and signs, 3 recipients at one
// domain) sent by `smtp-source -s 20 -d -r 3` to the same sink (relayhost, no DNS).
// Both: messages (emails) per second from the first request to the sink's count of
// the last one. Postfix sends a message as one transaction with 3 RCPT; svc as one
// transaction per recipient, each with its own signed return path (issue 15), the
// message built and signed once: the sink counts 3 per email for svc.
// Postfix + OpenDKIM (issue 36): the same Postfix with Debian's opendkim as its milter on
// loopback, signing the same message unsigned (RSA-2048, relaxed/relaxed, the same key and
// selector): what a self-hoster who wants signed mail from Postfix runs. Its CPU is Postfix's
// tree and opendkim's. Before its first round one message goes through it to a capturing MX
// and its signature is checked with mailauth, so the rounds are known to sign.
// Rounds alternate svc, Postfix, Postfix + OpenDKIM … on fresh instances and one sink.
//
// Settings (env): BENCH_MESSAGES (10000), BENCH_CLIENTS (20: HTTP clients for svc,
// smtp-source sessions for Postfix), BENCH_ROUNDS (1), BENCH_ONLY=svc|postfix|opendkim,
// BENCH_NODE_ARGS (extra node flags for svc, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
// BENCH_SVC_ARGS (extra `svc serve` flags, e.g. "--workers 2"), BENCH_EXE=1 builds and runs svc as
// the executable dist/svc (what a user runs), BENCH_DIST=1 runs svc from an
// esbuild bundle like `npm run build` makes (judge RSS on that), BENCH_KEEP=1 keeps temp dirs.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { startMxPeer } from '../test/peers/mx.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import {
  buildExe,
  cpuMs,
  env,
  fmt,
  machine,
  mb,
  median,
  reportResult,
  ROOT,
  RssSampler,
  threadCpuMs,
  verdict,
} from './lib.ts';
import {
  machineTicks,
  missingOpenDkim,
  missingTools,
  ownTempDir,
  procCpuMs,
  removeDir,
  runSmtpSource,
  startPostfix,
  startOpenDkim,
  startSink,
  treeCpuMs,
  type OpenDkim,
  type Sink,
} from './deliver-peers.ts';
import {
  DEST_DOMAIN,
  buildDist,
  SENDER_DOMAIN,
  emailBody5k,
  prepareDataDir,
  SELECTOR,
  startBenchDns,
  startSvc,
  statusCounts,
  wireMessage,
} from './deliver-svc.ts';

const MESSAGES = env.num('BENCH_MESSAGES', 10_000);
/** Recipients per email (emailBody5k), all at one domain. */
const RCPTS = 3;
const CLIENTS = env.num('BENCH_CLIENTS', 20);
const ROUNDS = env.num('BENCH_ROUNDS', 1);
const ONLY = process.env.BENCH_ONLY as Kind | undefined;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const SVC_ARGS = (process.env.BENCH_SVC_ARGS ?? '').split(' ').filter(Boolean);
/** A run fails when the sink's count does not move for this long. */
const STALL_MS = 60_000;
const EXE = process.env.BENCH_EXE === '1';
const DIST = !EXE && process.env.BENCH_DIST === '1';
/** Issue 36: ≥ 1.5× Postfix relaying, ≥ 3× Postfix signing through OpenDKIM, RSS ≤ 250 MB. */
const TARGET = { ratio: 1.5, dkimRatio: 3, rssMb: 250 };
type Kind = 'svc' | 'postfix' | 'opendkim';
const LABEL: Record<Kind, string> = { svc: 'svc', postfix: 'Postfix', opendkim: 'Postfix + OpenDKIM' };
/** Without OpenDKIM installed, its rounds are left out (and said so). */
const noOpenDkim = missingOpenDkim();

const missing = missingTools();
if (missing) {
  console.error(missing);
  process.exit(1);
}

interface Run {
  kind: Kind;
  round: number;
  rate: number;
  seconds: number;
  acceptSeconds: number;
  cpuMsPerMsg: number;
  hwmMb: number;
  sampledMaxMb: number;
  delivered: number;
  extra: number;
  /** Whole machine busy (all CPUs, %) during the run, and CPU ms per message of the harness (this process + sink). */
  machineBusy: number;
  harnessMsPerMsg: number;
  /** SMTP sessions that ended at the sink during the run (svc reuses its sessions). */
  sessions: number;
  /** svc: CPU ms per message per thread kind. */
  threads: Record<string, number>;
  ok: boolean;
  problems: string[];
}

/** Machine-wide and harness CPU from `start()` to `stop()`. */
function meter(sink: Sink) {
  const m0 = machineTicks();
  const p0 = process.cpuUsage();
  const s0 = procCpuMs(sink.pid);
  const sess0 = sink.sessions();
  return (messages: number) => {
    const m1 = machineTicks();
    const p = process.cpuUsage(p0);
    return {
      machineBusy: (100 * (m1.busy - m0.busy)) / (m1.total - m0.total),
      harnessMsPerMsg: ((p.user + p.system) / 1000 + procCpuMs(sink.pid) - s0) / messages,
      sessions: sink.sessions() - sess0,
    };
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the sink has counted `want` messages past `base`; returns the time it did (performance.now()). */
async function untilCounted(sink: Sink, base: number, want: number, label: string): Promise<number> {
  let last = -1;
  let lastMove = performance.now();
  let report = performance.now() + 10_000;
  for (;;) {
    const got = sink.count() - base;
    const now = performance.now();
    if (got >= want) return now;
    if (got !== last) {
      last = got;
      lastMove = now;
    }
    if (now - lastMove > STALL_MS) throw new Error(`${label}: the sink stalled at ${got}/${want} messages`);
    if (now > report) {
      console.log(`    … ${label}: ${fmt(got)}/${fmt(want)} at the sink`);
      report = now + 10_000;
    }
    await sleep(5);
  }
}

async function runSvc(
  round: number,
  sink: Sink,
  dnsServer: string,
  dkim: ReturnType<typeof generateKeyPairSync>,
): Promise<Run> {
  const dir = ownTempDir('svc');
  const dataDir = join(dir, 'data');
  const key = await prepareDataDir(dataDir, dkim);
  const svc = await startSvc({
    entry: dist?.main,
    executable: EXE ? join(ROOT, 'dist', 'svc') : undefined,
    dataDir,
    dnsServer,
    mxPort: sink.port,
    nodeArgs: NODE_ARGS,
    extraArgs: SVC_ARGS,
  });
  const problems: string[] = [];
  try {
    const rss = new RssSampler(svc.pid, 100);
    const pool = new Pool(svc.url, { connections: CLIENTS, pipelining: 1, keepAliveTimeout: 60_000 });
    const bodies = Array.from({ length: MESSAGES }, (_, i) => JSON.stringify(emailBody5k(i)));
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
    const base = sink.count();
    const cpu0 = cpuMs(svc.pid);
    const threads0 = Object.fromEntries(threadCpuMs(svc.pid));
    const metered = meter(sink);
    let next = 0;
    let accepted = 0;
    const t0 = performance.now();
    const client = async () => {
      while (next < MESSAGES) {
        const body = bodies[next++]!;
        const res = await pool.request({ method: 'POST', path: '/v1/emails', headers, body });
        const text = await res.body.text();
        if (res.statusCode === 202) accepted++;
        else if (problems.length < 5) problems.push(`${res.statusCode} ${text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    const tAccepted = performance.now();
    await pool.close();
    // One transaction per recipient (each its own signed return path): the sink counts each.
    const t1 = await untilCounted(sink, base, accepted * RCPTS, 'svc');
    const harness = metered(accepted);
    const threads1 = Object.fromEntries(threadCpuMs(svc.pid));
    // The sink counts a message at its "."; svc records DELIVERED once the 250 is back.
    let counts = statusCounts(dataDir);
    for (let i = 0; i < 600 && (counts.emails.DELIVERED ?? 0) < accepted; i++) {
      await sleep(100);
      counts = statusCounts(dataDir);
    }
    const cpu1 = cpuMs(svc.pid);
    rss.sample();
    const hwmKb = rss.hwmKb();
    rss.stop();
    await sleep(500); // anything sent twice would reach the sink by now
    const extra = sink.count() - base - accepted * RCPTS;
    const code = await svc.stop();
    if (code !== 0) problems.push(`svc exited with ${code}`);
    counts = statusCounts(dataDir);
    const delivered = counts.emails.DELIVERED ?? 0;
    if (accepted !== MESSAGES) problems.push(`${MESSAGES - accepted} requests not accepted`);
    if (delivered !== MESSAGES) problems.push(`emails by status ${JSON.stringify(counts.emails)}`);
    if ((counts.recipients.DELIVERED ?? 0) !== RCPTS * MESSAGES)
      problems.push(`recipients by status ${JSON.stringify(counts.recipients)}`);
    if (extra !== 0) problems.push(`the sink got ${extra} transactions more than accepted recipients`);
    const seconds = (t1 - t0) / 1000;
    return {
      kind: 'svc',
      round,
      rate: accepted / seconds,
      seconds,
      acceptSeconds: (tAccepted - t0) / 1000,
      cpuMsPerMsg: (cpu1 - cpu0) / accepted,
      hwmMb: mb(hwmKb),
      sampledMaxMb: mb(rss.maxKb),
      delivered,
      extra,
      ...harness,
      threads: Object.fromEntries(
        Object.entries(threads1)
          .map(([k, v]) => [k, (v - (threads0[k] ?? 0)) / accepted] as const)
          .filter(([, v]) => v >= 0.005),
      ),
      ok: problems.length === 0,
      problems,
    };
  } finally {
    await svc.stop();
    removeDir(dir);
  }
}

/** Postfix relaying `messageFile` (the signed message); with `milter`, signing it (unsigned) through OpenDKIM. */
async function runPostfix(round: number, sink: Sink, messageFile: string, milter?: OpenDkim): Promise<Run> {
  const pf = await startPostfix(sink.port, milter ? { milterPort: milter.port } : {});
  const problems: string[] = [];
  try {
    const master = pf.masterPid();
    const base = sink.count();
    const peerCpu = () => treeCpuMs(master) + (milter ? procCpuMs(milter.pid) : 0);
    const cpu0 = peerCpu();
    const metered = meter(sink);
    const t0 = performance.now();
    let tAccepted = 0;
    const source = runSmtpSource({
      port: pf.port,
      sessions: CLIENTS,
      messages: MESSAGES,
      rcpts: 3,
      file: messageFile,
      from: `bounces@bounces.${SENDER_DOMAIN}`,
      to: `rcpt@${DEST_DOMAIN}`,
    }).then((r) => ((tAccepted = performance.now()), r));
    const t1 = await untilCounted(sink, base, MESSAGES, milter ? 'opendkim' : 'postfix');
    const harness = metered(MESSAGES);
    const src = await source;
    if (src.code !== 0) problems.push(`smtp-source exited with ${src.code}: ${src.stderr.slice(0, 300)}`);
    let tally = pf.tally();
    for (let i = 0; i < 300 && (tally.sent < 3 * MESSAGES || tally.queued !== 0); i++) {
      await sleep(100);
      tally = pf.tally();
    }
    const cpu1 = peerCpu();
    await sleep(500);
    const extra = sink.count() - base - MESSAGES;
    if (tally.sent !== 3 * MESSAGES) problems.push(`${tally.sent} recipients sent, not ${3 * MESSAGES}`);
    if (tally.queued !== 0) problems.push(`${tally.queued} messages left in the queue`);
    if (extra !== 0) problems.push(`the sink got ${extra} messages more than sent`);
    const seconds = (t1 - t0) / 1000;
    return {
      kind: milter ? 'opendkim' : 'postfix',
      round,
      rate: MESSAGES / seconds,
      seconds,
      acceptSeconds: (tAccepted - t0) / 1000,
      cpuMsPerMsg: (cpu1 - cpu0) / MESSAGES,
      hwmMb: NaN,
      sampledMaxMb: NaN,
      delivered: tally.sent / 3,
      extra,
      ...harness,
      threads: {},
      ok: problems.length === 0,
      problems,
    };
  } finally {
    await pf.stop();
  }
}

/**
 * One message through Postfix + OpenDKIM to a capturing MX (test/peers/mx.ts), its signature
 * checked by mailauth against the bench's key: "pass" and the d= and s= it signed with, or
 * the run stops (a peer that did not sign would be compared for nothing).
 */
async function checkOpenDkimSigns(milter: OpenDkim, file: string, publicKey: KeyObject): Promise<string> {
  const mx = await startMxPeer();
  const pf = await startPostfix(mx.port, { milterPort: milter.port });
  try {
    const src = await runSmtpSource({
      port: pf.port,
      sessions: 1,
      messages: 1,
      rcpts: 1,
      file,
      from: `bounces@bounces.${SENDER_DOMAIN}`,
      to: `rcpt@${DEST_DOMAIN}`,
    });
    for (let i = 0; i < 200 && mx.received.length === 0; i++) await sleep(50);
    const got = mx.received[0];
    if (src.code !== 0 || !got)
      throw new Error(`nothing reached the capturing MX (smtp-source ${src.code}: ${src.stderr})`);
    const record = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
    const resolver = (name: string) =>
      Promise.resolve(name === `${SELECTOR}._domainkey.${SENDER_DOMAIN}` ? [[record]] : []);
    const r = (await dkimVerify(got.raw, { resolver })).results[0];
    const verdict = `${r?.status?.result ?? 'none'} (d=${r?.signingDomain ?? '?'}, s=${r?.selector ?? '?'})`;
    if (r?.status?.result !== 'pass' || !/c=relaxed\/relaxed/.test(got.raw.toString('latin1'))) {
      throw new Error(`OpenDKIM did not sign as asked: ${verdict}`);
    }
    return `${verdict}, relaxed/relaxed`;
  } finally {
    await pf.stop();
    await mx.close();
  }
}

// ---------------------------------------------------------------------------

const dist = DIST && ONLY !== 'postfix' ? await buildDist() : undefined;
if (EXE && ONLY !== 'postfix') buildExe();
if (dist) process.on('exit', () => dist.remove());
const work = ownTempDir('deliver');
const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
const message = await wireMessage(0, dkim.privateKey);
// smtp-source -F appends CRLF to each line itself (and dot-stuffs): the file has bare LF.
const messageFile = join(work, 'message.eml');
writeFileSync(messageFile, message.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
// The same message unsigned, for OpenDKIM to sign: svc's DKIM-Signature field (and its folded lines) taken out.
const unsignedFile = join(work, 'unsigned.eml');
writeFileSync(
  unsignedFile,
  message
    .toString('latin1')
    .replace(/^DKIM-Signature:.*\r\n(?:[ \t].*\r\n)*/im, '')
    .replace(/\r\n/g, '\n'),
  'latin1',
);
const requestBytes = Buffer.byteLength(JSON.stringify(emailBody5k(0)));

const kinds = (['svc', 'postfix', 'opendkim'] as const).filter(
  (k) => (!ONLY || ONLY === k) && !(k === 'opendkim' && noOpenDkim),
);
const dns = await startBenchDns(dkim.publicKey);
const sink = await startSink(work);

console.log(
  `bench:deliver — ${machine()}, ${new Date().toISOString()}, svc runs from ${EXE ? 'the executable dist/svc (BENCH_EXE=1, built now)' : dist ? 'a bundle (BENCH_DIST=1)' : 'source (node src/main.ts)'}`,
);
console.log(
  `${fmt(MESSAGES)} messages per run, ${fmt(message.length)} B on the wire (DKIM RSA-2048 signed; request ${fmt(requestBytes)} B JSON), ` +
    `3 recipients at one domain = 1 transaction with 3 RCPT per message; ${CLIENTS} clients; ${ROUNDS} round(s) alternating ${kinds.map((k) => LABEL[k]).join(' / ')}`,
);
console.log(
  `svc: ${EXE ? 'dist/svc' : dist ? 'node .bench-tmp/deliver-dist/main.js' : 'node src/main.ts'} serve … --dns-servers ${dns.server} --mx-port ${sink.port}${SVC_ARGS.length ? ' ' + SVC_ARGS.join(' ') : ''}` +
    `${NODE_ARGS.length ? ` (node ${NODE_ARGS.join(' ')})` : ''}; Postfix: smtp-source -d -s ${CLIENTS} -m ${MESSAGES} -r 3 -F <message> → ` +
    `throwaway Postfix → relayhost [127.0.0.1]:${sink.port} (smtp-sink -c)`,
);

if (noOpenDkim && (!ONLY || ONLY === 'opendkim')) console.log(`Postfix + OpenDKIM left out: ${noOpenDkim}`);
const milter = kinds.includes('opendkim')
  ? await startOpenDkim({
      domain: SENDER_DOMAIN,
      selector: SELECTOR,
      privateKeyPem: dkim.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    })
  : undefined;
if (milter) console.log(`OpenDKIM signs: ${await checkOpenDkimSigns(milter, unsignedFile, dkim.publicKey)}`);

const runs: Run[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of kinds) {
      const run =
        kind === 'svc'
          ? await runSvc(round, sink, dns.server, dkim)
          : kind === 'postfix'
            ? await runPostfix(round, sink, messageFile)
            : await runPostfix(round, sink, unsignedFile, milter);
      runs.push(run);
      console.log(
        `  round ${round} ${LABEL[kind].padEnd(18)} ${fmt(run.rate).padStart(5)} msgs/s  (${fmt(run.seconds, 1)} s; ` +
          `${kind === 'svc' ? 'API accepted all' : 'smtp-source done'} in ${fmt(run.acceptSeconds, 1)} s)  ` +
          `cpu ${fmt(run.cpuMsPerMsg, 2)} ms/msg` +
          (kind === 'svc' ? `  peak RSS ${fmt(run.hwmMb)} MB (sampled ${fmt(run.sampledMaxMb)} MB)` : '') +
          `  delivered ${fmt(run.delivered)}/${fmt(MESSAGES)}  ${run.ok ? 'ok' : 'PROBLEM: ' + run.problems.join('; ')}`,
      );
      console.log(
        `      machine busy ${fmt(run.machineBusy)}%, harness (this process${kind === 'svc' ? ' + DNS' : ''} + sink) ` +
          `${fmt(run.harnessMsPerMsg, 2)} ms/msg, ${fmt(run.sessions)} SMTP sessions ended at the sink` +
          (kind === 'svc'
            ? `; svc threads ms/msg: ${Object.entries(run.threads)
                .map(([k, v]) => `${k} ${fmt(v, 2)}`)
                .join(', ')}`
            : ''),
      );
    }
  }
} finally {
  await milter?.stop();
  await sink.stop();
  await dns.close();
}

const svcRuns = runs.filter((r) => r.kind === 'svc');
const pfRuns = runs.filter((r) => r.kind === 'postfix');
const svcRate = svcRuns.length ? median(svcRuns.map((r) => r.rate)) : NaN;
const pfRate = pfRuns.length ? median(pfRuns.map((r) => r.rate)) : NaN;
const ratio = svcRate / pfRate;
const dkRuns = runs.filter((r) => r.kind === 'opendkim');
const dkRate = dkRuns.length ? median(dkRuns.map((r) => r.rate)) : NaN;
const dkRatio = svcRate / dkRate;
const hwm = svcRuns.length ? Math.max(...svcRuns.map((r) => r.hwmMb)) : NaN;
console.log(
  `\nmedian: svc ${fmt(svcRate)} msgs/s (cpu ${fmt(median(svcRuns.map((r) => r.cpuMsPerMsg)), 2)} ms/msg), ` +
    `Postfix ${fmt(pfRate)} msgs/s (cpu ${fmt(median(pfRuns.map((r) => r.cpuMsPerMsg)), 2)} ms/msg), ` +
    `ratio svc/Postfix ${fmt(ratio, 2)}, svc peak RSS ${fmt(hwm)} MB`,
);
if (dkRuns.length)
  console.log(
    `        Postfix + OpenDKIM ${fmt(dkRate)} msgs/s (cpu ${fmt(median(dkRuns.map((r) => r.cpuMsPerMsg)), 2)} ms/msg), ` +
      `ratio svc/(Postfix + OpenDKIM) ${fmt(dkRatio, 2)}`,
  );
if (svcRuns.length > 1 && pfRuns.length === svcRuns.length)
  console.log(`ratio per round: ${svcRuns.map((r, i) => fmt(r.rate / pfRuns[i]!.rate, 2)).join(', ')}`);
console.log('\ntargets:');
if (svcRuns.length && pfRuns.length)
  console.log(`  svc ≥ ${TARGET.ratio} × Postfix     ${fmt(ratio, 2)}×  ${verdict(ratio >= TARGET.ratio)}`);
if (svcRuns.length && dkRuns.length)
  console.log(
    `  svc ≥ ${TARGET.dkimRatio} × Postfix + OpenDKIM  ${fmt(dkRatio, 2)}×  ${verdict(dkRatio >= TARGET.dkimRatio)}`,
  );
if (svcRuns.length)
  console.log(`  svc RSS ≤ ${TARGET.rssMb} MB        ${fmt(hwm)} MB  ${verdict(hwm <= TARGET.rssMb)}`);
console.log(`  every email DELIVERED     ${verdict(runs.every((r) => r.ok))}`);
if (svcRuns.length && pfRuns.length)
  reportResult({
    name: 'deliver',
    svc: svcRate,
    peer: pfRate,
    peerName: 'Postfix',
    unit: 'msgs/s',
    svcCpuUs: median(svcRuns.map((r) => r.cpuMsPerMsg)) * 1000,
    peerCpuUs: median(pfRuns.map((r) => r.cpuMsPerMsg)) * 1000,
    target: { ratio: TARGET.ratio },
    ok: runs.every((r) => r.ok),
  });
removeDir(work);
process.exitCode = runs.length && runs.every((r) => r.ok) ? 0 : 1;
