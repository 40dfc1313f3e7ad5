// npm run bench:webhooks — events delivered to webhooks per second, end to end.
//
// `svc serve` (from source, or the bundle with BENCH_DIST=1) on a fresh data dir with
// --allow-insecure-webhooks; a webhook on every `simulated` event points at an HTTPS
// receiver in this process (127.0.0.1, a certificate from a CA made here that svc trusts
// through NODE_EXTRA_CA_CERTS). Clients POST /v1/emails/batch (100 TEST emails each, so
// 100 events) for BENCH_SECONDS; the receiver counts the events and the time from each
// event's created_at to its receipt. Prints events/s received (target ≥ 5,000), p50/p99
// latency, svc's CPU per event and peak RSS, and checks that every event arrived once.
//
// Settings (env): BENCH_SECONDS (15), BENCH_CLIENTS (4 concurrent batch requests),
// BENCH_DRAIN (30 s at most to receive the rest after sending stops), BENCH_DIST=1.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { startReceiver, subscribe, trustReceiver } from './webhook-receiver.ts';
import { cpuMs, emailBody, threadCpuMs, env, fmt, machine, mb, percentile, ROOT, startServer, verdict } from './lib.ts';

const SECONDS = env.num('BENCH_SECONDS', 15);
const CLIENTS = env.num('BENCH_CLIENTS', 4);
const DRAIN = env.num('BENCH_DRAIN', 30);

const receiver = await startReceiver();
const caFile = trustReceiver(receiver);
const svc = await startServer('svc', (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));

await subscribe(svc.dataDir, receiver.port);

const pool = new Pool(svc.url, { connections: CLIENTS });
const batch = JSON.stringify({ emails: Array.from({ length: 100 }, (_, i) => emailBody(i)) });
let sent = 0;
const cpuBefore = cpuMs(svc.pid);
const started = Date.now();
const until = started + SECONDS * 1000;
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (Date.now() < until) {
      const res = await pool.request({
        path: '/v1/emails/batch',
        method: 'POST',
        headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' },
        body: batch,
      });
      const out = (await res.body.json()) as { data: { results: { id: string | null }[] } };
      if (res.statusCode !== 202) throw new Error(`batch answered ${res.statusCode}`);
      sent += out.data.results.filter((r) => r.id).length;
    }
  }),
);
const sendSeconds = (Date.now() - started) / 1000;
receiver.poll();
const receivedWhileSending = receiver.seen.size;
const drainUntil = Date.now() + DRAIN * 1000;
for (receiver.poll(); receiver.seen.size < sent && Date.now() < drainUntil; receiver.poll()) {
  await new Promise((r) => setTimeout(r, 50));
}
const seconds = (Date.now() - started) / 1000;
const cpu = cpuMs(svc.pid) - cpuBefore;
const threads = threadCpuMs(svc.pid);
const { hwmKb } = await svc.stop();
await pool.close();
const received = receiver.seen.size;
const repeats = [...receiver.seen.values()].filter((n) => n > 1).length;

// The floor, in the same run: a bare client POSTing to the same receiver (bench/webhooks-floor.ts).
receiver.mute(true);
// Asynchronously: the Node receiver answers on this process's event loop.
const floorRun = await promisify(execFile)(
  process.execPath,
  ['--import', 'tsx', 'bench/webhooks-floor.ts', `https://127.0.0.1:${receiver.port}/hooks`, String(SECONDS)],
  { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile } },
);
const floor = JSON.parse(floorRun.stdout) as { posted: number; seconds: number };
await receiver.close();

const rate = received / seconds;
console.log(`bench:webhooks — ${machine()}, ${new Date().toISOString()}`);
console.log(
  `${CLIENTS} clients × batches of 100 TEST emails for ${SECONDS} s; one webhook on simulated; receiver: ${receiver.kind}`,
);
console.log(`  sent          ${fmt(sent)} events in ${fmt(sendSeconds, 1)} s (${fmt(sent / sendSeconds)} accepted/s)`);
console.log(`  received      ${fmt(received)} events, all by ${fmt(seconds, 1)} s: ${fmt(rate)} events/s end to end`);
console.log(
  `  during/after ${fmt(receivedWhileSending)} received while sending (svc holds webhooks back while its accept is busy); ` +
    `the rest at ${fmt((received - receivedWhileSending) / Math.max(0.001, seconds - sendSeconds))} events/s after`,
);
console.log(
  `  latency       p50 ${fmt(percentile(receiver.latencies, 50))} ms, p99 ${fmt(percentile(receiver.latencies, 99))} ms (event to receipt)`,
);
console.log(
  `  svc CPU       ${fmt((cpu * 1000) / Math.max(1, received), 0)} µs per event (accept + dispatch), peak RSS ${fmt(mb(hwmKb))} MB`,
);
console.log(
  `  svc threads   ${[...threads]
    .filter(([, ms]) => ms >= 100)
    .sort((a, b) => b[1] - a[1])
    .map(([n, ms]) => `${n} ${fmt(ms / 1000, 1)} s`)
    .join(', ')} (CPU since start)`,
);
console.log(`  repeats       ${repeats}; missing ${sent - received}`);
const floorRate = floor.posted / floor.seconds;
console.log(
  `  floor         ${fmt(floorRate)} POSTs/s from a bare undici client to the same receiver: svc is ${fmt(rate / floorRate, 2)}× the floor`,
);
console.log(`  target        ≥ 5,000 events/s: ${verdict(rate >= 5000 && received === sent)}`);
