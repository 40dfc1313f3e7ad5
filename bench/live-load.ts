// A LIVE svc under steady load, shared by bench:growth and bench:top: svc serve (its own
// child process) on a prepared data dir, delivering through a loopback DNS server to
// Postfix's smtp-sink, and an open-loop poster of bench:deliver's ~5 KB email.
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { Pool } from 'undici';
import { percentile } from './lib.ts';
import { ownTempDir, removeDir, startSink, type Sink } from './deliver-peers.ts';
import { buildDist, emailBody5k, prepareDataDir, startBenchDns, startSvc, type SvcProcess } from './deliver-svc.ts';
import type { DnsServer } from '../test/peers/dns.ts';

export interface LiveSvc {
  svc: SvcProcess;
  sink: Sink;
  dataDir: string;
  key: string;
  stop(): Promise<void>;
}

/** svc serve with `extraArgs`, a LIVE key and a verified signing domain, delivering to smtp-sink. */
export async function startLiveSvc(prefix: string, extraArgs: string[]): Promise<LiveSvc> {
  const dist = process.env.BENCH_DIST === '1' ? await buildDist() : undefined;
  const work = ownTempDir(prefix);
  const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dns: DnsServer = await startBenchDns(dkim.publicKey);
  const sink = await startSink(work);
  const dataDir = join(work, 'data');
  const key = await prepareDataDir(dataDir, dkim);
  const svc = await startSvc({
    entry: dist?.main,
    dataDir,
    dnsServer: dns.server,
    mxPort: sink.port,
    nodeArgs: [],
    extraArgs,
  });
  return {
    svc,
    sink,
    dataDir,
    key,
    async stop() {
      await svc.stop();
      await sink.stop();
      await dns.close();
      dist?.remove();
      if (process.env.BENCH_KEEP !== '1') removeDir(work);
    },
  };
}

/** bench:deliver's email with its first `recipients` recipients (1 to 3). */
export function liveEmail(n: number, recipients: number): string {
  const body = emailBody5k(n);
  return JSON.stringify({ ...body, to: (body.to as string[]).slice(0, recipients) });
}

/**
 * Posts emails at `rate` per second, spread over every 100 ms whatever the server's pace
 * (open loop), until `stop()`; counts answers and keeps latencies for `take()`.
 */
export function startPoster(live: LiveSvc, rate: number, recipients: number) {
  const pool = new Pool(live.svc.url, { connections: 50, pipelining: 1, keepAliveTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${live.key}` };
  const inFlight = new Set<Promise<void>>();
  const state = { sent: 0, accepted: 0, failed: 0, problems: [] as string[] };
  let latencies: number[] = [];
  const problem = (p: string) => {
    state.failed++;
    if (state.problems.length < 5) state.problems.push(p);
  };
  const post = (i: number) => {
    const t = performance.now();
    const p = pool
      .request({ method: 'POST', path: '/v1/emails', headers, body: liveEmail(i, recipients) })
      .then(async (res) => {
        const text = await res.body.text();
        latencies.push(performance.now() - t);
        if (res.statusCode === 202) state.accepted++;
        else problem(`${res.statusCode} ${text.slice(0, 200)}`);
      })
      .catch((err: unknown) => problem(String(err)))
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const t0 = performance.now();
  let stopped = false;
  const ticker = setInterval(() => {
    if (stopped) return;
    const due = Math.floor(((performance.now() - t0) / 1000) * rate);
    while (state.sent < due) post(state.sent++);
  }, 100);
  return {
    state,
    /** The p99 of the latencies since the last call, in ms. */
    takeP99(): number {
      const p = latencies.length ? percentile(latencies, 99) : 0;
      latencies = [];
      return p;
    },
    async stop() {
      stopped = true;
      clearInterval(ticker);
      await Promise.all(inFlight);
      await pool.close();
    },
  };
}
