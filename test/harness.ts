import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import type { ConfigInput } from '../src/config/schema.ts';
import { FakeClock } from '../src/lib/clock.ts';
import type { Logger } from '../src/lib/logger.ts';
import { initialize, type InitResult } from '../src/accounts/index.ts';
import { createHttpServer } from '../src/http/server.ts';
import { checkResponses } from './openapi-check.ts';
import pg from 'pg';
import { inject } from 'vitest';
import { DATABASE_FILE } from '../src/store/data-dir.ts';
import { migratedPgDatabase } from './postgres/db.ts';

const PgPool = pg.Pool;

export interface TestEnv {
  dir: string;
  /** The store the suite runs on: SVC_TEST_STORE=postgres runs it on PostgreSQL (vitest's postgres project). */
  store: 'sqlite' | 'postgres';
  /** The audit log's order of writing: SQLite's rowid, PostgreSQL's seq column. */
  auditOrder: 'rowid' | 'seq';
  /** Rows of a query with `?` placeholders, on whichever store runs. */
  query<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The environment a `svc` child process needs to open this env's store (data dir, and database on PostgreSQL). */
  cliEnv: Record<string, string>;
  clock: FakeClock;
  app: App;
  server: FastifyInstance;
  init: InitResult;
  /** A fresh key of the init project. */
  key(opts?: {
    env?: 'LIVE' | 'TEST';
    permissions?: 'FULL_ACCESS' | 'SENDING_ONLY' | 'READ_ONLY';
    expires_at?: string | null;
  }): Promise<string>;
  close(): Promise<void>;
}

let n = 0;

/**
 * scrypt at 1/16 of a server's cost: the suites hash and check over a thousand passwords, at
 * 60 ms each at full cost. The hash names its cost, so every check runs the same code.
 */
export const TEST_PASSWORD_COST = { N: 1024, r: 8, p: 1 };

/** A migrated database in a temp dir, an injected clock, an initialised account, and the HTTP server (not listening). */
export async function createTestEnv(
  settings: Partial<ConfigInput> = {},
  plan: 'FREE' | 'PAID' | 'PREMIUM' | 'UNLIMITED' = 'UNLIMITED',
  overrides: {
    logger?: Logger;
    webhookCa?: string[];
    mtaStsPort?: number;
  } = {},
): Promise<TestEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const clock = new FakeClock('2026-03-15T12:00:00.000Z');
  const pg = testStore() === 'postgres' ? await migratedPgDatabase('env') : undefined;
  // The run's migrated SQLite file (global-setup.ts), where each env migrating its own took ~40 ms.
  const template = pg ? undefined : inject('sqliteTemplate');
  if (template) copyFileSync(template, join(dir, DATABASE_FILE));
  const config = loadConfig({
    flags: { dataDir: dir, templateTimeout: '500ms', ...(pg ? { database: pg.url } : {}), ...settings },
  });
  const app = await createApp(config, { clock, createDataDir: true, passwordCost: TEST_PASSWORD_COST, ...overrides });
  const pool = pg ? new PgPool({ connectionString: pg.url, max: 2 }) : undefined;
  // The database is dropped at close, ending whatever is still connected: not a test failure.
  pool?.on('error', () => {});
  const init = await initialize(app.accounts, app.keys, {
    email: 'owner@example.com',
    password: 'owner-password-1',
    org: 'Acme',
    project: 'Web',
    plan,
    acceptDpa: true,
  });
  const server = createHttpServer(app);
  // Every management response must be what /v1/openapi.json says (issue 11).
  const problems: string[] = [];
  checkResponses(server, problems);
  await server.ready();
  return {
    dir,
    store: pg ? 'postgres' : 'sqlite',
    auditOrder: pg ? 'seq' : 'rowid',
    async query<T>(sql: string, ...params: unknown[]): Promise<T[]> {
      if (!pool) {
        const stmt = app.db.prepare(sql);
        return (stmt.reader ? stmt.all(...params) : (stmt.run(...params), [])) as T[];
      }
      let i = 0;
      return (
        await pool.query(
          sql.replace(/\?/g, () => `$${++i}`),
          params,
        )
      ).rows as T[];
    },
    cliEnv: { SVC_DATA_DIR: dir, ...(pg ? { SVC_DATABASE_URL: pg.url } : {}) },
    clock,
    app,
    server,
    init,
    async key(opts = {}) {
      const k = await app.keys.createKey(init.project_id, {
        name: `k${++n}`,
        env: opts.env ?? 'TEST',
        permissions: opts.permissions ?? 'FULL_ACCESS',
        expires_at: opts.expires_at ?? null,
      });
      return k.key!;
    },
    async close() {
      await server.close();
      await app.close();
      await pool?.end();
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
      if (problems.length) throw new Error(`responses unlike /v1/openapi.json:\n${problems.join('\n')}`);
    },
  };
}

/** Marks `domain` verified and bound to the init project, without DNS (tests of the send rules). */
export async function verifyDomain(env: TestEnv, domain: string): Promise<void> {
  const now = new Date(env.clock.now()).toISOString();
  const id = `00000000-0000-7000-8000-${String(++n).padStart(12, '0')}`;
  await env.query(
    "INSERT INTO domains (id, organization_id, name, status, created_at) VALUES (?, ?, ?, 'VERIFIED', ?)",
    id,
    env.init.organization_id,
    domain,
    now,
  );
  await env.query(
    'INSERT INTO project_domains (project_id, domain_id, created_at) VALUES (?, ?, ?)',
    env.init.project_id,
    id,
    now,
  );
}

export async function count(env: TestEnv, table: string, where = '1=1', ...params: unknown[]): Promise<number> {
  const [row] = await env.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, ...params);
  return Number(row!.n);
}

/** The store the tests run on: SVC_TEST_STORE=postgres (vitest's postgres project), else SQLite. */
export function testStore(): 'sqlite' | 'postgres' {
  return process.env.SVC_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
}
