// npm run bench:schedule — scheduled sending (issue 35): BENCH_MESSAGES (100,000) LIVE emails
// scheduled for one instant, then how long after it the last is handed to delivery, and how
// fast other sends are accepted meanwhile.
//
// svc (`node src/main.ts serve`, its own child process, or the bundle with BENCH_DIST=1) on a
// fresh data dir with a verified signing domain (DKIM RSA-2048), delivering to Postfix's
// smtp-sink through a loopback DNS server (bench:deliver's setup).
// 1. The schedule: BENCH_MESSAGES emails (~5 KB, one recipient each) are posted by 20
//    keep-alive clients, all with the same `scheduled_at`: the start of the first whole minute
//    at least BENCH_LEAD seconds (default: the expected accept time + 30 s) after the start.
// 2. The floor, in the same run: while the schedule waits (nothing is due), a TEST key's sends
//    (accepted, simulated, never delivered) by the same 20 clients for BENCH_WINDOW seconds (10).
// 3. From the scheduled instant: the recipients handed to delivery (attempted at least once),
//    polled every 100 ms read-only; the same TEST sends for BENCH_WINDOW seconds from 2 s after
//    the instant, while the schedule drains; the sink's count until every email has arrived.
// Reported: the first and the last handed after the instant, the handed rate, the last at the
// sink, and the accept rate while draining against the floor's (the ratio). Checked: none
// handed before the instant, every email DELIVERED, the sink got each once.
//
// Settings (env): BENCH_MESSAGES (100000), BENCH_CLIENTS (20), BENCH_WINDOW (10), BENCH_LEAD,
// BENCH_DIST=1, BENCH_NODE_ARGS, BENCH_SVC_ARGS.
import Database from 'better-sqlite3';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { cpuMs, env, fmt, machine, reportResult, verdict } from './lib.ts';
import { missingTools, ownTempDir, removeDir, startSink } from './deliver-peers.ts';
import { buildDist, emailBody5k, prepareDataDir, startBenchDns, startSvc, statusCounts } from './deliver-svc.ts';

const MESSAGES = env.num('BENCH_MESSAGES', 100_000);
const CLIENTS = env.num('BENCH_CLIENTS', 20);
const WINDOW_MS = env.num('BENCH_WINDOW', 10) * 1000;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const SVC_ARGS = (process.env.BENCH_SVC_ARGS ?? '').split(' ').filter(Boolean);
/** Accepts per second assumed when choosing the instant (this machine: ~2,500 a second). */
const ASSUMED_ACCEPT_RATE = 1200;

/** The first whole minute at least `leadMs` from now. */
function instantAfter(leadMs: number): number {
  return Math.ceil((Date.now() + leadMs) / 60_000) * 60_000;
}

/** Posts `bodies` with `clients` keep-alive connections; the 202s and the first problems. */
async function postAll(url: string, key: string, bodies: (i: number) => string, count: number, stopAt = Infinity) {
  const pool = new Pool(url, { connections: CLIENTS, pipelining: 1, keepAliveTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const problems: string[] = [];
  let next = 0;
  let accepted = 0;
  const t0 = performance.now();
  const client = async () => {
    while (next < count && Date.now() < stopAt) {
      const res = await pool.request({ method: 'POST', path: '/v1/emails', headers, body: bodies(next++) });
      const text = await res.body.text();
      if (res.statusCode === 202) accepted++;
      else if (problems.length < 5) problems.push(`${res.statusCode} ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return { accepted, seconds, rate: accepted / seconds, problems };
}

/** TEST sends for `ms`: simulated, never delivered, the same accept path otherwise. */
function testLoad(url: string, key: string, ms: number) {
  const body = (i: number) =>
    JSON.stringify({ from: 'other@sender.test', to: [`t${i}@elsewhere.test`], subject: `t${i}`, text: 'other send' });
  return postAll(url, key, body, Number.MAX_SAFE_INTEGER, Date.now() + ms);
}

async function main(): Promise<void> {
  const missing = missingTools();
  if (missing) throw new Error(missing);
  const dist = env.flag('BENCH_DIST') ? await buildDist() : undefined;
  const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dns = await startBenchDns(dkim.publicKey);
  const dir = ownTempDir('schedule');
  const sink = await startSink(dir);
  const dataDir = join(dir, 'data');
  const liveKey = await prepareDataDir(dataDir, dkim);
  // A TEST key of the same project, for the other sends.
  const app = await createApp(loadConfig({ env: {}, flags: { dataDir } }), {});
  const project = (await app.accounts.listProjects((await app.accounts.listOrgs())[0]!.id))[0]!;
  const testKey = (await app.keys.createKey(project.id, { name: 'other', env: 'TEST' })).key!;
  await app.close();
  const svc = await startSvc({
    entry: dist?.main,
    dataDir,
    dnsServer: dns.server,
    mxPort: sink.port,
    nodeArgs: NODE_ARGS,
    extraArgs: SVC_ARGS,
  });
  const problems: string[] = [];
  const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
  const handed = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM recipients WHERE attempts > 0');
  try {
    const lead = env.num('BENCH_LEAD', MESSAGES / ASSUMED_ACCEPT_RATE + 30) * 1000;
    const at = instantAfter(lead);
    const scheduledAt = new Date(at).toISOString();
    console.log(
      `bench:schedule  ${machine()}\n  ${MESSAGES} LIVE emails (~5 KB, 1 recipient, DKIM RSA-2048) for ${scheduledAt}, ` +
        `${CLIENTS} clients; TEST sends for ${WINDOW_MS / 1000} s idle and while draining; smtp-sink`,
    );
    const cpu0 = cpuMs(svc.pid);
    const body = (i: number) =>
      JSON.stringify({ ...emailBody5k(i), to: [`s${i}@dest.test`], scheduled_at: scheduledAt });
    const scheduled = await postAll(svc.url, liveKey, body, MESSAGES);
    problems.push(...scheduled.problems);
    const cpuAccept = cpuMs(svc.pid) - cpu0;
    console.log(
      `  scheduled   ${scheduled.accepted} accepted at ${fmt(scheduled.rate)} req/s, ${fmt((cpuAccept * 1000) / scheduled.accepted)} µs CPU each; ` +
        `${fmt((at - Date.now()) / 1000, 1)} s to the instant`,
    );
    if (Date.now() > at - WINDOW_MS - 2000) problems.push('the accept outlasted the lead: raise BENCH_LEAD');
    const early = handed.get()!.n;
    if (early !== 0) problems.push(`${early} recipients handed to delivery before their time`);
    const idle = await testLoad(svc.url, testKey, WINDOW_MS);
    problems.push(...idle.problems);
    console.log(`  floor       TEST sends, nothing due: ${fmt(idle.rate)} req/s`);
    const before = handed.get()!.n;
    if (before !== 0) problems.push(`${before} recipients handed to delivery before their time`);
    await sleep(Math.max(0, at - Date.now()));

    // From the instant: the handed count, and the other sends 2 s in.
    let first: number | undefined;
    let last: number | undefined;
    const sink0 = sink.count();
    let sinkDone: number | undefined;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const n = handed.get()!.n;
        const t = Date.now() - at;
        if (n > 0 && first === undefined) first = t;
        if (n >= scheduled.accepted && last === undefined) last = t;
        if (sinkDone === undefined && sink.count() - sink0 >= scheduled.accepted) sinkDone = t;
        if (last !== undefined && sinkDone !== undefined) return;
        await sleep(100);
      }
    })();
    await sleep(2000);
    const busy = await testLoad(svc.url, testKey, WINDOW_MS);
    problems.push(...busy.problems);
    const until = Date.now() + 1_800_000;
    while ((last === undefined || sinkDone === undefined) && Date.now() < until) await sleep(200);
    polling = false;
    await poll;
    const cpuTotal = cpuMs(svc.pid) - cpu0;
    let counts = statusCounts(dataDir);
    for (let i = 0; i < 100 && (counts.emails.DELIVERED ?? 0) < scheduled.accepted; i++) {
      await sleep(100);
      counts = statusCounts(dataDir);
    }
    await sleep(500);
    const extra = sink.count() - sink0 - scheduled.accepted;
    if ((counts.emails.DELIVERED ?? 0) !== scheduled.accepted)
      problems.push(`emails by status ${JSON.stringify(counts.emails)}`);
    if (extra !== 0) problems.push(`the sink got ${extra} more than the emails scheduled`);
    const drainS = (last ?? NaN) / 1000;
    const ratio = busy.rate / idle.rate;
    console.log(
      `  drain       first handed ${fmt((first ?? NaN) / 1000, 2)} s after the instant, last ${fmt(drainS, 1)} s ` +
        `(${fmt(scheduled.accepted / drainS)} emails/s); the last at the sink ${fmt((sinkDone ?? NaN) / 1000, 1)} s after`,
    );
    console.log(
      `  meanwhile   TEST sends while draining: ${fmt(busy.rate)} req/s = ${fmt(ratio, 2)}x the floor; ` +
        `svc CPU ${fmt(cpuTotal / 1000, 1)} s in all`,
    );
    console.log(`  every email once, none early, all DELIVERED: ${verdict(problems.length === 0)}`);
    for (const p of problems) console.log(`    ${p}`);
    reportResult({
      name: 'schedule',
      svc: busy.rate,
      peer: idle.rate,
      peerName: 'the same sends, nothing due',
      unit: 'req/s',
      svcCpuUs: 0,
      peerCpuUs: 0,
      target: { ratio: 0.5 },
      ok: problems.length === 0,
    });
    if (problems.length) process.exitCode = 1;
  } finally {
    db.close();
    await svc.stop();
    await sink.stop();
    await dns.close();
    dist?.remove();
    if (!env.flag('BENCH_KEEP')) removeDir(dir);
  }
}

await main();
