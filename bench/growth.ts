// npm run bench:growth — does the database file stop growing under steady load?
//
// bench:deliver's load, held steady for an hour: LIVE emails (~5 KB, 3 recipients at one
// domain, DKIM RSA-2048) posted to the Public API at BENCH_RATE per second (open loop,
// spread over each second) and delivered to Postfix's smtp-sink through a loopback DNS
// server. svc runs with short retentions so that an hour covers them several times over:
// --body-retention 10m (bodies and attachments dropped) and --email-retention 20m (emails
// deleted with their events). Every BENCH_SAMPLE_S seconds it prints the database file, the
// WAL, the free pages, the emails kept and the accept latency; at the end, the growth of the
// file over the last third of the run, once both retentions are at work.
//
// Settings (env): BENCH_RATE (100 emails/s), BENCH_MINUTES (60), BENCH_SAMPLE_S (60),
// BENCH_BODY_RETENTION (10m), BENCH_EMAIL_RETENTION (20m), BENCH_DIST=1 (svc from a bundle),
// BENCH_KEEP=1 keeps the temp dirs.
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMs, env, fmt, machine, mb, procStatus } from './lib.ts';
import { missingTools } from './deliver-peers.ts';
import { startLiveSvc, startPoster } from './live-load.ts';

const RATE = env.num('BENCH_RATE', 100);
const MINUTES = env.num('BENCH_MINUTES', 60);
const SAMPLE_S = env.num('BENCH_SAMPLE_S', 60);
const BODY_RETENTION = process.env.BENCH_BODY_RETENTION ?? '10m';
const EMAIL_RETENTION = process.env.BENCH_EMAIL_RETENTION ?? '20m';
const RCPTS = 3;

const missing = missingTools();
if (missing) {
  console.error(missing);
  process.exit(1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fileBytes = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

interface Sample {
  minute: number;
  dbBytes: number;
  walBytes: number;
  freeBytes: number;
  emails: number;
  queued: number;
  accepted: number;
  delivered: number;
  p99Ms: number;
  cpuPct: number;
  rssMb: number;
}

const live = await startLiveSvc('growth', ['--body-retention', BODY_RETENTION, '--email-retention', EMAIL_RETENTION]);
const { svc, sink, dataDir } = live;

console.log(`bench:growth — ${machine()}, ${new Date().toISOString()}`);
console.log(
  `${RATE} LIVE emails/s (3 recipients, ~5 KB, DKIM-signed) for ${MINUTES} min, open loop; ` +
    `svc serve --body-retention ${BODY_RETENTION} --email-retention ${EMAIL_RETENTION}; delivered to smtp-sink`,
);

const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
const emailsCount = db.prepare<[], number>('SELECT count(*) FROM emails').pluck();
const queuedCount = db.prepare<[], number>('SELECT count(*) FROM recipients WHERE next_attempt_at IS NOT NULL').pluck();
const pageSize = db.pragma('page_size', { simple: true }) as number;
const sinkBase = sink.count();
const samples: Sample[] = [];
const t0 = performance.now();
let cpuBefore = cpuMs(svc.pid);
let sampledAt = t0;

function sample(): void {
  const now = performance.now();
  const cpu = cpuMs(svc.pid);
  const free = (db.pragma('freelist_count', { simple: true }) as number) * pageSize;
  const s: Sample = {
    minute: (now - t0) / 60_000,
    dbBytes: fileBytes(join(dataDir, 'svc.sqlite')),
    walBytes: fileBytes(join(dataDir, 'svc.sqlite-wal')),
    freeBytes: free,
    emails: emailsCount.get()!,
    queued: queuedCount.get()!,
    accepted: poster.state.accepted,
    delivered: sink.count() - sinkBase,
    p99Ms: poster.takeP99(),
    cpuPct: (100 * (cpu - cpuBefore)) / (now - sampledAt),
    rssMb: mb(procStatus(svc.pid).VmRSS ?? 0),
  };
  cpuBefore = cpu;
  sampledAt = now;
  samples.push(s);
  console.log(
    `  ${s.minute.toFixed(1).padStart(5)} min  db ${fmt(s.dbBytes / 1e6, 1).padStart(7)} MB  wal ${fmt(s.walBytes / 1e6, 1).padStart(6)} MB  ` +
      `free ${fmt(s.freeBytes / 1e6, 1).padStart(6)} MB  emails ${fmt(s.emails).padStart(8)}  waiting ${fmt(s.queued).padStart(6)}  ` +
      `accepted ${fmt(s.accepted).padStart(8)}  at sink ${fmt(s.delivered).padStart(9)}  p99 ${fmt(s.p99Ms, 1)} ms  ` +
      `svc ${fmt(s.cpuPct)} % cpu, ${fmt(s.rssMb)} MB`,
  );
}

let exitCode = 0;
const poster = startPoster(live, RATE, RCPTS);
try {
  const end = t0 + MINUTES * 60_000;
  while (performance.now() < end) {
    await sleep(Math.min(SAMPLE_S * 1000, end - performance.now()));
    sample();
  }
  await poster.stop();
  sample();
  const { sent, accepted, failed, problems } = poster.state;

  const last = samples.at(-1)!;
  const third = samples.find((s) => s.minute >= (last.minute * 2) / 3) ?? samples[0]!;
  const hours = (last.minute - third.minute) / 60;
  const growth = last.dbBytes - third.dbBytes;
  const walMax = Math.max(...samples.map((s) => s.walBytes));
  console.log('');
  console.log(
    `accepted ${fmt(accepted)} of ${fmt(sent)} (${fmt(accepted / (last.minute * 60))}/s), ${failed} refused or failed; ` +
      `the sink counted ${fmt(last.delivered)} of ${fmt(accepted * RCPTS)} recipients`,
  );
  console.log(
    `database ${fmt(last.dbBytes / 1e6, 1)} MB at the end, ${fmt(third.dbBytes / 1e6, 1)} MB at ${third.minute.toFixed(0)} min: ` +
      `${growth >= 0 ? '+' : ''}${fmt(growth / 1e6, 1)} MB over the last ${fmt(last.minute - third.minute)} min ` +
      `(${fmt(hours > 0 ? growth / 1e6 / hours : 0, 1)} MB/h); WAL at most ${fmt(walMax / 1e6, 1)} MB; ` +
      `${fmt(last.emails)} emails kept (${fmt(last.dbBytes / Math.max(1, last.emails))} B of file per email kept)`,
  );
  // Bounded: over the last third the file grows by less than 5 % of its size.
  const bounded = growth < 0.05 * third.dbBytes;
  console.log(`${bounded ? 'PASS' : 'MISS'} the file stops growing once the retentions are at work`);
  for (const p of problems) console.log(`  problem: ${p}`);
  if (failed) exitCode = 1;
} finally {
  db.close();
  await live.stop();
}
process.exit(exitCode);
