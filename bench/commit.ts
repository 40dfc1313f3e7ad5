// bench:commit — group commit on PostgreSQL beside SQLite's, and beside PostgreSQL without it
// (issue 17, item 3). Closed loop: BENCH_WRITERS concurrent writers (default 64), each waiting
// for its durable answer before the next write, for BENCH_SECONDS (default 10) per case.
// A write is BENCH_STATEMENTS shapes: 1 INSERT of a ~1 KB row, and 8 (an accept's count:
// email, bodies, recipients, tags, event, usage, idempotency...).
//
// Both stores durable: SQLite WAL with synchronous=FULL, PostgreSQL with fsync and
// synchronous_commit on, both on this machine's disk.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createAuditWriter } from '../src/audit/repo.ts';
import { createEmailsRepo, type AcceptOptions, type NewEmail } from '../src/emails/repo.ts';
import { createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createPgSuppressionsRepo } from '../src/suppressions/repo-pg.ts';
import { createPgEmailsRepo } from '../src/emails/repo-pg.ts';
import { createIdempotencySql } from '../src/idempotency/index.ts';
import { createPgIdempotency } from '../src/idempotency/repo-pg.ts';
import { createUsageSql } from '../src/limits/usage.ts';
import { createPgUsage } from '../src/limits/usage-pg.ts';
import { createSuppressionsRepo } from '../src/suppressions/repo.ts';
import { createCommitter } from '../src/store/committer.ts';
import { openDatabase } from '../src/store/db.ts';
import { migratePostgres, openPostgres, type PgPool } from '../src/store/pg.ts';
import { createPgCommitter } from '../src/store/pg-committer.ts';
import { startTestPostgres } from '../test/postgres/server.ts';
import { env, fmt, machine, percentile, tempDir } from './lib.ts';

const WRITERS = env.num('BENCH_WRITERS', 64);
const SECONDS = env.num('BENCH_SECONDS', 10);
const BODY = 'x'.repeat(1000);
/** PostgreSQL group commit: groups in flight (connections) and the largest group. */
const PG_PARALLEL = env.num('BENCH_PG_PARALLEL', 2);
const PG_BATCH = env.num('BENCH_PG_BATCH', 500);
const SHAPES = (process.env.BENCH_STATEMENTS ?? '1,8').split(',').map(Number);

interface Case {
  name: string;
  /** One write of `statements` inserts, resolved once durable. */
  write: (statements: number, n: number) => Promise<unknown>;
  commits: () => number;
}

async function run(c: Case, statements: number): Promise<{ perSecond: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let n = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await c.write(statements, n++);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return {
    perSecond: latencies.length / SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

function sqliteCase(dir: string, name: string): Case & { close: () => void } {
  const db = new Database(join(dir, name));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (id, body) VALUES (?, ?)');
  let commits = 0;
  const tx = createCommitter(db, { windowMs: 2, maxBatch: 500, onCommit: () => commits++ });
  return {
    name: 'SQLite, group commit',
    write: (statements, n) =>
      tx.write(() => {
        for (let i = 0; i < statements; i++) insert.run(`w${n}-${i}`, BODY);
      }),
    commits: () => commits,
    close: () => {
      tx.close();
      db.close();
    },
  };
}

function pgGroupCase(pool: PgPool): Case & { close: () => Promise<void> } {
  let commits = 0;
  const tx = createPgCommitter(pool, {
    windowMs: 2,
    maxBatch: PG_BATCH,
    parallel: PG_PARALLEL,
    onCommit: () => commits++,
  });
  return {
    name: 'PostgreSQL, group commit',
    write: (statements, n) =>
      tx.write(async (t) => {
        for (let i = 0; i < statements; i++) {
          await t.query('INSERT INTO t (id, body) VALUES ($1, $2)', [`w${n}-${i}`, BODY]);
        }
      }),
    commits: () => commits,
    close: () => tx.close(),
  };
}

function pgPlainCase(pool: PgPool): Case {
  let commits = 0;
  return {
    name: 'PostgreSQL, a transaction per write',
    write: async (statements, n) => {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        for (let i = 0; i < statements; i++) {
          // Prepared once per connection, as the group commit's statements are.
          await c.query({
            name: 'ins',
            text: 'INSERT INTO t (id, body) VALUES ($1, $2)',
            values: [`w${n}-${i}`, BODY],
          });
        }
        await c.query('COMMIT');
        commits++;
      } finally {
        c.release();
      }
    },
    commits: () => commits,
  };
}

/** A LIVE email of 1 recipient with a ~1 KB body, as `POST /v1/emails` accepts it. */
let emails = 0;
function liveEmail(): NewEmail {
  const id = `bench-${++emails}`;
  return {
    id,
    project_id: 'p1',
    api_key_id: 'k1',
    env: 'LIVE',
    source: 'API',
    status: 'QUEUED',
    from_email: 'news@example.com',
    from_name: null,
    to: [`r${emails}@example.net`],
    cc: null,
    bcc: null,
    reply_to: null,
    subject: 'Hello',
    tags: ['bench'],
    headers: {},
    html: `<p>${BODY}</p>`,
    text: BODY,
    template_id: null,
    template_version: null,
    created_at: new Date().toISOString(),
    attachments: [],
    event: { id: `ev-${id}`, type: 'queued', data: {} },
  };
}
const ACCEPT: AcceptOptions = {
  suppress: true,
  volume: { orgId: 'o1', limits: { monthly: null, daily: null }, now: Date.now() },
  idempotency: null,
};
const ACCOUNT = `INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
  INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x')`;

/** The accept of a LIVE email by each store's own repository and group commit. */
async function acceptCases(): Promise<void> {
  console.log('\nthe accept of a LIVE email (1 recipient, ~2 KB of body, suppression list, volume):');
  const { db, close } = openDatabase(join(dir, 'accept'), { create: true });
  db.exec(ACCOUNT);
  const tx = createCommitter(db, { windowMs: 2, maxBatch: 500 });
  const audit = createAuditWriter(db);
  const lite = createEmailsRepo(db, tx, {
    suppressions: createSuppressionsRepo(db, tx, audit),
    usage: createUsageSql(db),
    idempotency: createIdempotencySql(db),
    audit,
  });
  const name = `accept_${process.pid}`;
  await pool.query(`CREATE DATABASE ${name}`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  const pgPool = await openPostgres(url.toString(), { max: 16 });
  await migratePostgres(pgPool);
  await pgPool.query(ACCOUNT);
  // Diagnosis: without the rows every accept updates (the hourly stats row, the month's and
  // the day's counters), to see what their locks cost.
  const noHotRows = env.flag('BENCH_NO_HOT_ROWS');
  if (noHotRows) {
    db.exec('DROP TRIGGER email_events_stats');
    await pgPool.query('DROP TRIGGER email_events_stats ON email_events');
  }
  const opts = noHotRows ? { ...ACCEPT, volume: null } : ACCEPT;
  const pgTx = createPgCommitter(pgPool, { windowMs: 2, maxBatch: PG_BATCH, parallel: PG_PARALLEL });
  const pg = createPgEmailsRepo(pgPool, pgTx, {
    usage: createPgUsage(pgPool),
    idempotency: createPgIdempotency(pgPool),
    audit: createPgAuditWriter(),
    suppressions: createPgSuppressionsRepo(pgPool, pgTx, createPgAuditWriter()),
  });
  const results: Record<string, number> = {};
  for (const [label, repo] of [
    ['SQLite', lite],
    ['PostgreSQL', pg],
  ] as const) {
    const r = await run(
      {
        name: label,
        write: () => {
          const e = liveEmail();
          return repo.acceptEmail(e, [{ address: e.to[0]!, kind: 'to' }], opts);
        },
        commits: () => 0,
      },
      1,
    );
    results[label] = r.perSecond;
    console.log(
      `  ${label.padEnd(38)} ${fmt(r.perSecond).padStart(7)} emails/s  p50 ${fmt(r.p50, 1).padStart(6)} ms  ` +
        `p99 ${fmt(r.p99, 1).padStart(6)} ms`,
    );
  }
  console.log(`  PostgreSQL's accept: ${fmt(results.PostgreSQL! / results.SQLite!, 2)}× SQLite's`);
  tx.close();
  await close();
  await pgTx.close();
  await pgPool.end();
}

console.log(`bench:commit — ${machine()}, ${new Date().toISOString()}`);
console.log(
  `${WRITERS} writers, closed loop, ${SECONDS} s a case; both stores durable, on disk; ` +
    `PostgreSQL: a pool of 16, group commit on ${PG_PARALLEL} connections, groups of at most ${PG_BATCH}`,
);
const dir = tempDir('commit');
const server = await startTestPostgres({ durable: true });
const pool = await openPostgres(server.url, { max: Math.max(16, PG_PARALLEL) });
await pool.query(
  'CREATE TABLE t (seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, id TEXT NOT NULL, body TEXT NOT NULL)',
);
try {
  for (const statements of SHAPES) {
    console.log(`\n${statements} INSERT${statements > 1 ? 's' : ''} per write:`);
    const results: Record<string, number> = {};
    const lite = sqliteCase(dir, `bench-${statements}.sqlite`);
    const group = pgGroupCase(pool);
    const plain = pgPlainCase(pool);
    for (const c of [lite, group, plain]) {
      const before = c.commits();
      const r = await run(c, statements);
      const commits = c.commits() - before;
      results[c.name] = r.perSecond;
      console.log(
        `  ${c.name.padEnd(38)} ${fmt(r.perSecond).padStart(7)} writes/s  p50 ${fmt(r.p50, 1).padStart(6)} ms  ` +
          `p99 ${fmt(r.p99, 1).padStart(6)} ms  ${fmt(commits / SECONDS)} commits/s`,
      );
    }
    lite.close();
    await group.close();
    const g = results['PostgreSQL, group commit']!;
    console.log(
      `  PostgreSQL group commit: ${fmt(g / results['PostgreSQL, a transaction per write']!, 2)}× a transaction per write, ` +
        `${fmt(g / results['SQLite, group commit']!, 2)}× SQLite's`,
    );
    await pool.query('TRUNCATE t');
  }
  await acceptCases();
} finally {
  await pool.end();
  await server.stop();
}
