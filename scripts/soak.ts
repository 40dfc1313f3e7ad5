// npm run soak — crash safety under load (issue 16): `svc serve` from source takes email
// through the API and the SMTP relay and delivers it to an MX peer on loopback, while this
// script kills it with SIGKILL at random moments, SOAK_ROUNDS (10) times, restarting it
// each time. Then it checks that every acknowledged email (202 or 250) exists and reaches
// DELIVERED, and that no recipient got a message twice except ones whose transaction was
// in flight at a kill (claimed and not yet recorded). Exit 0 when all holds.
// SOAK_STORE=postgres runs the same on PostgreSQL (`svc serve --database`, a server from the
// npm package the tests use, on disk with fsync on).
//
//   npm run soak            SOAK_ROUNDS=3 npm run soak            SOAK_STORE=postgres npm run soak
import Database from 'better-sqlite3';
import pg from 'pg';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { initDataDir } from '../test/e2e/init-data-dir.ts';
import { startTestPostgres } from '../test/postgres/server.ts';
import { startDnsServer } from '../test/peers/dns.ts';
import { startMxPeer } from '../test/peers/mx.ts';
import { signingDomainRows } from '../test/signing-domain.ts';

const ROUNDS = Number(process.env.SOAK_ROUNDS ?? 10);
const STORE = process.env.SOAK_STORE ?? 'sqlite';
if (STORE !== 'sqlite' && STORE !== 'postgres') {
  console.error('error: SOAK_STORE is sqlite or postgres');
  process.exit(2);
}
const ROOT = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'svc-soak-'));
const dataDir = join(dir, 'data');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const dns = await startDnsServer();
dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
dns.set('mx.dest.test', { A: ['127.0.0.1'] });
// Slow answers to DATA keep transactions in flight when the server is killed.
const mx = await startMxPeer({ dataDelayMs: 30 });

// The store: the data dir's SQLite file, or a database on a PostgreSQL server of our own.
const pgServer = STORE === 'postgres' ? await startTestPostgres({ durable: true }) : undefined;
let database: string | undefined;
if (pgServer) {
  const admin = new pg.Client({ connectionString: pgServer.url });
  await admin.connect();
  await admin.query('CREATE DATABASE soak');
  await admin.end();
  database = pgServer.url.replace(/\/postgres$/, '/soak');
}
// On PostgreSQL a killed node's claimed recipients wait out their lease (several nodes: none
// may assume the others died); a short one lets the restarted node send them within the run.
const storeFlags = database ? ['--database', database, '--delivery-lease', '5s'] : [];

/** The soak's checks read the store from outside, as an operator would, on either store. */
const reader = database
  ? (() => {
      const pool = new pg.Pool({ connectionString: database, max: 2 });
      return {
        query: async <T>(sql: string) => (await pool.query(sql)).rows as T[],
        close: () => pool.end(),
      };
    })()
  : {
      query: <T>(sql: string) => {
        const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true });
        try {
          return Promise.resolve(db.prepare(sql).all() as T[]);
        } finally {
          db.close();
        }
      },
      close: () => Promise.resolve(),
    };

const { app, init } = await initDataDir(dataDir, database);
const signing = signingDomainRows({
  organizationId: init.organization_id,
  projectId: init.project_id,
  name: 'sender.test',
  selector: 'svc1',
});
if (database) {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  for (const [sql, params] of signing.statements) {
    let i = 0;
    await client.query(
      sql.replace(/\?/g, () => `$${++i}`),
      params,
    );
  }
  await client.end();
} else {
  for (const [sql, params] of signing.statements) app.db.prepare(sql).run(...params);
}
const key = (await app.keys.createKey(init.project_id, { name: 'live', env: 'LIVE' })).key!;
await app.close();

interface Server {
  child: ChildProcess;
  url: string;
  smtpPort: number;
}

async function start(): Promise<Server> {
  const smtpPort = await freePort();
  const args = ['serve', '--data-dir', dataDir, ...storeFlags, '--http-port', '0', '--smtp-port', String(smtpPort)];
  args.push('--dns-servers', dns.server, '--mx-port', String(mx.port), '--hostname', 'mta.svc.test');
  args.push('--workers', '1', '--log-format', 'json');
  const child = spawn(process.execPath, [join(ROOT, 'bin/svc.ts'), ...args], { cwd: dir });
  child.stdout.resume();
  const url = await new Promise<string>((resolve, reject) => {
    let log = '';
    child.stderr.on('data', (c: Buffer) => {
      log += c.toString();
      const m = /"url":"(http:\/\/[^"]+)".*svc is serving/.exec(log);
      if (m && log.includes('the SMTP relay is listening')) resolve(m[1]!);
    });
    child.once('exit', (code, signal) => reject(new Error(`svc serve exited ${code ?? signal}: ${log}`)));
  });
  return { child, url, smtpPort };
}

/** Acknowledged emails: id → the one recipient it was sent to. */
const acked = new Map<string, string>();
let n = 0;

async function apiSender(s: Server, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const to = `a${++n}@dest.test`;
    try {
      const res = await fetch(`${s.url}/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'n@sender.test', to: [to], subject: `api ${n}`, text: 'hello' }),
      });
      if (res.status === 202) acked.set(((await res.json()) as { data: { id: string } }).data.id, to);
    } catch {
      return; // the server is gone
    }
  }
}

async function relaySender(s: Server, stop: () => boolean): Promise<void> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: s.smtpPort,
    secure: false,
    ignoreTLS: true,
    auth: { user: 'apikey', pass: key },
    // One session for all of this sender's messages, as an application's mailer keeps.
    pool: true,
    maxConnections: 1,
  });
  while (!stop()) {
    const to = `s${++n}@dest.test`;
    try {
      // nodemailer's pool can leave a message's promise unsettled when its connection dies with
      // the server (a soak run hung after a kill, with no socket open): give up after 10 s.
      const sent = transport.sendMail({ from: 'n@sender.test', to, subject: `smtp ${n}`, text: 'hello' });
      const info = await Promise.race([sent, sleep(10_000).then(() => Promise.reject(new Error('no answer')))]);
      const id = /queued as (\S+)/.exec(info.response)?.[1];
      if (id) acked.set(id, to);
    } catch {
      transport.close();
      return;
    }
  }
  transport.close();
}

/** Rows claimed and not yet recorded: their messages may reach the peer again after the restart. */
async function inFlight(): Promise<number> {
  const [row] = await reader.query<{ n: number | string }>(
    "SELECT count(*) AS n FROM recipients WHERE status = 'SENDING'",
  );
  return Number(row!.n);
}

let allowance = 0;
let failed: boolean;
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const s = await start();
    let stopped = false;
    const senders = [
      apiSender(s, () => stopped),
      apiSender(s, () => stopped),
      relaySender(s, () => stopped),
      relaySender(s, () => stopped),
    ];
    await sleep(300 + Math.floor(Math.random() * 1200));
    const exited = new Promise((r) => s.child.once('exit', r));
    s.child.kill('SIGKILL');
    await exited;
    stopped = true;
    await Promise.all(senders);
    const flying = await inFlight();
    allowance += flying;
    console.log(`round ${round}: killed; ${acked.size} acknowledged so far, ${flying} in flight at the kill`);
  }
  const s = await start();
  const statuses = async () =>
    new Map(
      (await reader.query<{ id: string; status: string }>('SELECT id, status FROM emails')).map((r) => [
        r.id,
        r.status,
      ]),
    );
  const pending = (now: Map<string, string>) => [...acked.keys()].filter((id) => now.get(id) !== 'DELIVERED');
  for (let i = 0; i < 1200 && pending(await statuses()).length; i++) await sleep(100);
  const final = await statuses();
  const missing = [...acked.keys()].filter((id) => !final.has(id));
  const notDelivered = pending(final);
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));

  const copies = new Map<string, number>();
  for (const m of mx.received) for (const to of m.to) copies.set(to, (copies.get(to) ?? 0) + 1);
  const duplicates = [...copies.values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
  const lost = [...acked.values()].filter((to) => !copies.has(to));
  const viaRelay = [...acked.values()].filter((to) => to.startsWith('s')).length;
  console.log(
    `${STORE}, after ${ROUNDS} kills: ${acked.size} acknowledged (${acked.size - viaRelay} by the API, ${viaRelay} by the relay), ` +
      `${missing.length} missing, ${notDelivered.length} not DELIVERED, ` +
      `${lost.length} never reached the MX, ${duplicates} duplicate deliveries (allowed: ${allowance} in flight at kills)`,
  );
  failed = missing.length > 0 || notDelivered.length > 0 || lost.length > 0 || duplicates > allowance;
  console.log(failed ? 'FAIL' : 'PASS');
} finally {
  await reader.close();
  await pgServer?.stop();
  await mx.close();
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
