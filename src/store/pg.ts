import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { readMigrations } from './db.ts';
import { StoreOpenError } from './open-error.ts';

// PostgreSQL returns int8 (bigint: seq columns, counts) as strings, since a JS number holds
// only 53 bits. svc's values stay far below 2^53, and the SQLite store gives numbers: so do we.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type PgPool = pg.Pool;

// Beside this module in src/store/ and beside the bundle in dist/ (copied by scripts/bundle.ts).
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations-pg/', import.meta.url));

/** PostgreSQL's numbered migrations, as SQLite's (db.ts) but a numbering of their own. */
export function loadPgMigrations(): { version: number; name: string; sql: string }[] {
  return readMigrations(MIGRATIONS_DIR);
}

/** The URL as a person may read it in a message: no password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

export interface PgOpenOptions {
  /** Connections in the pool (default 10). */
  max?: number;
}

/**
 * A pool on the PostgreSQL database of `url`, checked with one round trip, so that a wrong
 * address, password or database name stops the command with one clear line (StoreOpenError).
 */
export async function openPostgres(url: string, opts: PgOpenOptions = {}): Promise<PgPool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5000,
    application_name: 'svc',
  });
  // A connection that the server closes (a restart, a failover, the database dropped) must
  // not crash the process: an idle one the pool drops and replaces; one checked out (a group
  // commit's, a job's lock) fails its next query, which its owner answers.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  try {
    await pool.query('SELECT 1');
  } catch (e) {
    await pool.end().catch(() => {});
    throw new StoreOpenError(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${(e as Error).message}`);
  }
  return pool;
}

// Held while migrating, so nodes started together apply each migration once, one after the other.
// Any constant works; this one is "svc" in ASCII.
const MIGRATION_LOCK = 0x737663;

export interface MigrationResult {
  from: number;
  to: number;
  applied: string[];
}

/**
 * Applies the migrations the database lacks, each in its own transaction with the version it
 * reaches (PostgreSQL's DDL is transactional: a failed migration leaves the version before it).
 * A database newer than this binary is refused, as SQLite's is (a downgrade is refused).
 */
export async function migratePostgres(pool: PgPool): Promise<MigrationResult> {
  const migrations = loadPgMigrations();
  const latest = migrations.at(-1)?.version ?? 0;
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS svc_schema (
           id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, updated_at TEXT NOT NULL)`,
      );
      const row = await client.query<{ version: number }>('SELECT version FROM svc_schema WHERE id = 1');
      const from = row.rows[0]?.version ?? 0;
      if (from > latest) {
        throw new StoreOpenError(
          `the PostgreSQL database has schema version ${from}, newer than this svc (${latest}): upgrade svc`,
        );
      }
      const applied: string[] = [];
      for (const m of migrations) {
        if (m.version <= from) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query(
            `INSERT INTO svc_schema (id, version, updated_at) VALUES (1, $1, $2)
             ON CONFLICT (id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
            [m.version, new Date().toISOString()],
          );
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw new StoreOpenError(`PostgreSQL migration ${m.name} failed: ${(e as Error).message}`);
        }
        applied.push(m.name);
      }
      return { from, to: Math.max(from, latest), applied };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } finally {
    client.release();
  }
}

/** The schema version the database holds (0 before the first migration). */
export async function pgSchemaVersion(pool: PgPool): Promise<number> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('svc_schema')::text AS t");
  if (!exists.rows[0]?.t) return 0;
  const row = await pool.query<{ version: number }>('SELECT version FROM svc_schema WHERE id = 1');
  return row.rows[0]?.version ?? 0;
}
