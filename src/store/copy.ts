import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runningServer } from './backup.ts';
import { DATABASE_FILE } from './data-dir.ts';
import { openDatabase, type Db } from './db.ts';
import { StoreOpenError } from './open-error.ts';
import { migratePostgres, openPostgres, redactUrl, type PgPool } from './pg.ts';

/**
 * Every table `svc db copy` moves, parents before children (each row's foreign keys hold as it
 * is inserted). A table of the SQLite schema in neither list stops the copy: a new table must
 * be placed here on purpose.
 */
const TABLES = [
  'users',
  'organizations',
  'projects',
  'memberships',
  'invitations',
  'api_keys',
  'audit_logs',
  'domains',
  'domain_dkim_keys',
  'project_domains',
  'dmarc_reports',
  'dmarc_report_rows',
  'templates',
  'template_versions',
  'emails',
  'email_bodies',
  'email_tags',
  'attachments',
  'email_events',
  'email_stats',
  'recipients',
  'destination_throttles',
  'mta_sts_policies',
  'tls_report_counts',
  'tls_reports',
  'suppressions',
  'idempotency_keys',
  'usage_counters',
  'server_settings',
  'server_secrets',
  'session_families',
  'session_tokens',
  'webhooks',
  'webhook_outbox',
  'webhook_deliveries',
  'inbound_routes',
  'received_emails',
] as const;

/**
 * Not copied: `nodes` are the running servers' rows (each node writes its own), and
 * `auth_epoch` is a counter whose value means nothing outside its database.
 */
const NOT_COPIED = new Set(['nodes', 'auth_epoch']);

/** PostgreSQL takes at most 65,535 parameters in one statement. */
const MAX_PARAMS = 65_535;

export interface CopyOptions {
  /** Rows per batch: each batch is one PostgreSQL transaction with the copy's progress. */
  batchRows?: number;
  /** Rows copied so far of all tables (earlier runs included), of `total`; `table` is the one under way. */
  onProgress?: (p: { table: string; copied: number; total: number }) => void;
}

export interface CopyResult {
  source: string;
  database: string;
  /** Rows of each table in the target once done (those of earlier runs included). */
  tables: Record<string, number>;
  rows: number;
  /** True when an interrupted copy was taken up where it stopped. */
  resumed: boolean;
}

interface TableState {
  /** The primary key of the last row copied; absent before the first batch. */
  after?: unknown[];
  copied: number;
  done: boolean;
}

type Progress = Record<string, TableState>;

/**
 * `svc db copy`: the data dir's SQLite database into an empty PostgreSQL database, for moving
 * to several nodes. Table by table in primary-key order, each batch one transaction that also
 * records how far the copy got, so an interrupted copy continues where it stopped with nothing
 * copied twice. The server must be stopped: rows changed behind the copy would be missed.
 */
export async function copyToPostgres(dataDir: string, url: string, opts: CopyOptions = {}): Promise<CopyResult> {
  const pid = runningServer(dataDir);
  if (pid !== null) {
    throw new StoreOpenError(
      `svc serve (pid ${pid}) runs on ${dataDir}: stop it first, so that nothing changes while it is copied`,
    );
  }
  const source = openDatabase(dataDir);
  let pool: PgPool | undefined;
  try {
    const file = realpathSync(join(dataDir, DATABASE_FILE));
    checkTables(source.db);
    pool = await openPostgres(url, { max: 1 });
    await migratePostgres(pool);
    const { progress, resumed } = await startOrResume(pool, file);
    const totals = Object.fromEntries(
      TABLES.map((t) => [t, (source.db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n]),
    );
    const total = Object.values(totals).reduce((a, b) => a + b, 0);
    const copied = () => TABLES.reduce((n, t) => n + (progress[t]?.copied ?? 0), 0);
    for (const table of TABLES) {
      const state = (progress[table] ??= { copied: 0, done: false });
      if (state.done) continue;
      const report = () => opts.onProgress?.({ table, copied: copied(), total });
      await copyTable(source.db, pool, table, state, progress, report, opts.batchRows ?? 1000);
    }
    await resetIdentities(pool);
    await pool.query('UPDATE svc_copy SET finished_at = $1 WHERE id = 1', [new Date().toISOString()]);
    const tables = Object.fromEntries(TABLES.map((t) => [t, progress[t]!.copied]));
    return {
      source: file,
      database: redactUrl(url),
      tables,
      rows: Object.values(tables).reduce((a, b) => a + b, 0),
      resumed,
    };
  } finally {
    await pool?.end();
    await source.close();
  }
}

function checkTables(db: Db): void {
  const known = new Set<string>([...TABLES, ...NOT_COPIED]);
  const names = db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all();
  const unknown = names.map((r) => r.name).filter((n) => !known.has(n));
  if (unknown.length) throw new Error(`svc db copy does not know the table ${unknown.join(', ')}`);
}

/**
 * The copy's record in the target: a new one on an empty database, or the one an interrupted
 * copy of the same file left. Anything else is refused, so a copy never mixes with other data.
 */
async function startOrResume(pool: PgPool, file: string): Promise<{ progress: Progress; resumed: boolean }> {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS svc_copy (
       id INTEGER PRIMARY KEY CHECK (id = 1), source TEXT NOT NULL, started_at TEXT NOT NULL,
       finished_at TEXT, progress TEXT NOT NULL)`,
  );
  const row = (
    await pool.query<{ source: string; finished_at: string | null; progress: string }>(
      'SELECT source, finished_at, progress FROM svc_copy WHERE id = 1',
    )
  ).rows[0];
  if (row) {
    if (row.source !== file) {
      throw new StoreOpenError(`the PostgreSQL database holds a copy of ${row.source}, not of ${file}`);
    }
    if (row.finished_at) {
      throw new StoreOpenError(`the PostgreSQL database already holds a finished copy of ${file} (${row.finished_at})`);
    }
    return { progress: JSON.parse(row.progress) as Progress, resumed: true };
  }
  for (const t of TABLES) {
    const any = await pool.query(`SELECT 1 FROM "${t}" LIMIT 1`);
    if (any.rowCount) {
      throw new StoreOpenError(`the PostgreSQL database already holds data (table ${t}): copy into an empty database`);
    }
  }
  await pool.query('INSERT INTO svc_copy (id, source, started_at, progress) VALUES (1, $1, $2, $3)', [
    file,
    new Date().toISOString(),
    '{}',
  ]);
  return { progress: {}, resumed: false };
}

async function copyTable(
  db: Db,
  pool: PgPool,
  table: string,
  state: TableState,
  progress: Progress,
  report: () => void,
  batchRows: number,
): Promise<void> {
  const info = db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; pk: number }[];
  const columns = info.map((c) => c.name);
  // In the order the rows were written where SQLite keeps one (its rowid), so PostgreSQL's
  // identity columns count in the same order (the audit log's seq); by primary key otherwise.
  const withoutRowid = /WITHOUT ROWID/i.test(
    (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql,
  );
  const key = withoutRowid
    ? info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => `"${c.name}"`)
    : ['rowid'];
  const list = columns.map((c) => `"${c}"`).join(', ');
  const keyList = key.join(', ');
  const rowsPerBatch = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMS / columns.length)));
  // The key's values come last in each row read, after the columns copied.
  const first = db.prepare(`SELECT ${list}, ${keyList} FROM "${table}" ORDER BY ${keyList} LIMIT ?`).raw();
  const next = db
    .prepare(
      `SELECT ${list}, ${keyList} FROM "${table}" WHERE (${keyList}) > (${key.map(() => '?').join(', ')})
       ORDER BY ${keyList} LIMIT ?`,
    )
    .raw();
  // Its triggers (the stats rollup, the webhook outbox) ran when the rows were first written;
  // their results are copied as rows of their own tables, so they must not run again. Turned
  // off inside each batch's transaction only: no other session ever sees them off.
  const triggered = await hasUserTriggers(pool, table);
  report();
  for (;;) {
    const read = (state.after ? next.all(...state.after, rowsPerBatch) : first.all(rowsPerBatch)) as unknown[][];
    if (read.length === 0) break;
    const rows = read.map((r) => r.slice(0, columns.length));
    const values = rows
      .map((_r, i) => `(${columns.map((_c, j) => `$${i * columns.length + j + 1}`).join(', ')})`)
      .join(', ');
    const updated: TableState = {
      after: read.at(-1)!.slice(columns.length),
      copied: state.copied + rows.length,
      done: false,
    };
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      if (triggered) await client.query(`ALTER TABLE "${table}" DISABLE TRIGGER USER`);
      await client.query(`INSERT INTO "${table}" (${list}) VALUES ${values}`, rows.flat());
      if (triggered) await client.query(`ALTER TABLE "${table}" ENABLE TRIGGER USER`);
      await client.query('UPDATE svc_copy SET progress = $1 WHERE id = 1', [
        JSON.stringify({ ...progress, [table]: updated }),
      ]);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
    Object.assign(state, updated);
    report();
  }
  state.done = true;
  await pool.query('UPDATE svc_copy SET progress = $1 WHERE id = 1', [JSON.stringify(progress)]);
}

async function hasUserTriggers(pool: PgPool, table: string): Promise<boolean> {
  const r = await pool.query(`SELECT 1 FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal LIMIT 1`, [
    table,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** Identity columns continue after the highest key copied, so the next row inserted gets a new one. */
async function resetIdentities(pool: PgPool): Promise<void> {
  const identities = await pool.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND is_identity = 'YES'`,
  );
  for (const { table_name: t, column_name: c } of identities.rows) {
    await pool.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(max("${c}"), 1), max("${c}") IS NOT NULL) FROM "${t}"`,
      [t, c],
    );
  }
}
