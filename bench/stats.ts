// npm run bench:stats — read latency of the dashboard and the Public API at 10k and at 1M emails.
//
// For each size, a fresh data dir made with the real migrations (owner, project, a TEST key
// made by the code), then filled directly with SQL in big transactions: emails spread over
// the last BENCH_DAYS days in time order (the ~1 KB body of bench:accept, 1–2 recipients, a
// tag), their recipient rows, and their events (queued, sending, sent, delivered or bounced,
// some opened and clicked), so migration 0010's trigger fills the stats rollup as it would.
// Then `svc serve` runs on it as a child process and one keep-alive client times requests one
// at a time: the stats endpoint (30 days by day and by hour), the dashboard list, and the
// Public API list (first page and filtered) and get. Prints p50/p99 per endpoint and size side
// by side, and the targets: stats and dashboard list p99 < 50 ms at 1M; Public API list/get
// flat from 10k to 1M (p50 at most 2 × its 10k value + 1 ms, p99 2 × + 2 ms).
//
// Settings (env): BENCH_SIZES (10000,1000000), BENCH_REQUESTS (300 per endpoint),
// BENCH_WARMUP (30), BENCH_DAYS (90), BENCH_KEEP=1 keeps the data dirs, BENCH_NODE_ARGS
// extra node flags for svc, BENCH_DIST=1 runs svc from the esbuild bundle (as bench:accept).
import { join } from 'node:path';
import { Pool } from 'undici';
import { bundleInto } from '../scripts/bundle.ts';
import { env, fmt, fromDist, machine, percentile, ROOT, serveOn, verdict } from './lib.ts';
import { DAYS, PASSWORD, prepare, type Dataset } from './stats-fill.ts';

const SIZES = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number);
const REQUESTS = env.num('BENCH_REQUESTS', 300);
const WARMUP = env.num('BENCH_WARMUP', 30);
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const DAY = 86_400_000;
const NOW = Date.now();
const iso = (t: number) => new Date(t).toISOString();

// ---------------------------------------------------------------------------
// svc serve on the prepared data dir.

const DIST = join(ROOT, '.bench-tmp', 'stats-dist');
let built: Promise<string> | undefined;

async function startSvc(dataDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  if (fromDist) await (built ??= bundleInto(DIST, []));
  const entry = fromDist ? [join(DIST, 'main.js')] : ['--import', 'tsx', 'src/main.ts'];
  return serveOn(dataDir, [process.execPath, [...NODE_ARGS, ...entry]]);
}

// ---------------------------------------------------------------------------
// The requests.

interface Endpoint {
  name: string;
  /** The path of request `i`; `auth` says which credential it takes. */
  path: (i: number) => string;
  auth: 'session' | 'key';
  /** The p99 ceiling at 1M (ms), or 'flat': at 1M, p50 ≤ 2 × its 10k value + 1 ms and p99 ≤ 2 × + 2 ms. */
  target: number | 'flat';
}

function endpoints(d: Dataset): Endpoint[] {
  const P = `/v1/organizations/${d.orgId}/projects/${d.projectId}`;
  const day = (t: number) => iso(t).slice(0, 10);
  const month = `from=${day(NOW - 29 * DAY)}&to=${day(NOW + DAY)}`;
  const aDay = `from=${iso(NOW - 45 * DAY)}&to=${iso(NOW - 44 * DAY)}`;
  const pick = <T>(xs: T[], i: number) => xs[(i * 7) % xs.length]!;
  return [
    { name: 'stats, 30 days by day', path: () => `${P}/stats?granularity=day&${month}`, auth: 'session', target: 50 },
    { name: 'stats, 30 days by hour', path: () => `${P}/stats?granularity=hour&${month}`, auth: 'session', target: 50 },
    { name: 'dashboard list, first page', path: () => `${P}/emails`, auth: 'session', target: 50 },
    { name: 'dashboard list, status=BOUNCED', path: () => `${P}/emails?status=BOUNCED`, auth: 'session', target: 50 },
    {
      name: 'dashboard list, to_email',
      path: (i) => `${P}/emails?to_email=${pick(d.addresses, i)}`,
      auth: 'session',
      target: 50,
    },
    { name: 'GET /v1/emails, first page', path: () => '/v1/emails', auth: 'key', target: 'flat' },
    { name: 'GET /v1/emails?status=BOUNCED', path: () => '/v1/emails?status=BOUNCED', auth: 'key', target: 'flat' },
    { name: 'GET /v1/emails?tag=invoice', path: () => '/v1/emails?tag=invoice', auth: 'key', target: 'flat' },
    {
      name: 'GET /v1/emails?to_email=…',
      path: (i) => `/v1/emails?to_email=${pick(d.addresses, i)}`,
      auth: 'key',
      target: 'flat',
    },
    { name: 'GET /v1/emails?from&to (1 day)', path: () => `/v1/emails?${aDay}`, auth: 'key', target: 'flat' },
    { name: 'GET /v1/emails/:id', path: (i) => `/v1/emails/${pick(d.ids, i)}`, auth: 'key', target: 'flat' },
  ];
}

interface Timing {
  p50: number;
  p99: number;
  problems: string[];
}

async function measure(d: Dataset): Promise<Map<string, Timing>> {
  const svc = await startSvc(d.dataDir);
  const pool = new Pool(svc.url, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  const out = new Map<string, Timing>();
  try {
    for (const e of endpoints(d)) {
      // A fresh session per endpoint: an access token lives 15 minutes.
      const token = e.auth === 'key' ? d.key : await login(pool);
      const headers = { authorization: `Bearer ${token}` };
      const problems: string[] = [];
      const times: number[] = [];
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        const t0 = performance.now();
        const res = await pool.request({ method: 'GET', path: e.path(i), headers });
        const text = await res.body.text();
        const ms = performance.now() - t0;
        if (res.statusCode !== 200 && problems.length < 3) problems.push(`${res.statusCode} ${text.slice(0, 160)}`);
        if (i >= WARMUP) times.push(ms);
      }
      const t: Timing = { p50: percentile(times, 50), p99: percentile(times, 99), problems };
      out.set(e.name, t);
      console.log(
        `  ${fmt(d.size).padStart(9)}  ${e.name.padEnd(34)} p50 ${fmt(t.p50, 2).padStart(7)} ms  ` +
          `p99 ${fmt(t.p99, 2).padStart(7)} ms${problems.length ? '  PROBLEM: ' + problems.join('; ') : ''}`,
      );
    }
  } finally {
    await pool.close();
    await svc.stop();
  }
  return out;
}

async function login(pool: Pool): Promise<string> {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@example.com', password: PASSWORD }),
  });
  const body = (await res.body.json()) as { data?: { access_token: string } };
  if (!body.data) throw new Error(`login failed: ${res.statusCode} ${JSON.stringify(body)}`);
  return body.data.access_token;
}

// ---------------------------------------------------------------------------

console.log(
  `bench:stats — ${machine()}, ${new Date().toISOString()}, svc runs from ${fromDist ? 'a bundle (BENCH_DIST=1)' : 'source via tsx'}`,
);
console.log(
  `emails over the last ${DAYS} days, one project; ${REQUESTS} requests per endpoint after ${WARMUP} of warmup, ` +
    'one at a time on one keep-alive connection',
);
const results = new Map<number, Map<string, Timing>>();
let last: Dataset | undefined;
for (const size of SIZES) {
  const d = (last = await prepare(size));
  console.log(
    `\n${fmt(size)} emails: filled in ${fmt(d.fillSeconds, 1)} s (${fmt(size / d.fillSeconds)} emails/s, ` +
      `trigger included), database ${fmt(d.dbMb)} MB, ${fmt(d.statsRows)} rollup rows`,
  );
  results.set(size, await measure(d));
}

const [small, large] = [SIZES[0]!, SIZES.at(-1)!];
const col = (t: Timing | undefined) => (t ? `${fmt(t.p50, 2).padStart(7)} ${fmt(t.p99, 2).padStart(7)}` : '');
console.log(`\np50 / p99 in ms, ${fmt(small)} vs ${fmt(large)} emails:`);
console.log(`  ${'endpoint'.padEnd(34)} ${fmt(small).padStart(15)} ${fmt(large).padStart(15)}   target`);
let ok = true;
for (const e of endpoints(last!)) {
  const a = results.get(small)?.get(e.name);
  const b = results.get(large)?.get(e.name);
  if (!a || !b) continue;
  const flat = b.p50 <= 2 * a.p50 + 1 && b.p99 <= 2 * a.p99 + 2;
  const pass = (e.target === 'flat' ? flat : b.p99 < e.target) && a.problems.length + b.problems.length === 0;
  ok &&= a.problems.length + b.problems.length === 0;
  const target = e.target === 'flat' ? 'flat' : `p99 < ${e.target} ms`;
  console.log(`  ${e.name.padEnd(34)} ${col(a)} ${col(b)}   ${target.padEnd(13)} ${verdict(pass)}`);
}
process.exitCode = ok ? 0 : 1;
