import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { bundleInto } from '../scripts/bundle.ts';
import { DATABASE_FILE } from '../src/store/data-dir.ts';
import { openDatabase } from '../src/store/db.ts';
import { migratePostgres, openPostgres } from '../src/store/pg.ts';
import { startTestPostgres } from './postgres/server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `svc` the CLI suites run: bin/svc.ts bundled as `npm run build` bundles it (cli-runner.ts). */
    svcBundle: string;
    /** The admin URL of the run's PostgreSQL server (test/postgres/server.ts). */
    pgAdminUrl: string;
    /** A database migrated to the latest schema, copied by migratedPgDatabase (test/postgres/db.ts). */
    pgMigratedTemplate: string;
    /** A SQLite file migrated to the latest schema, copied into each test env's data dir (harness.ts). */
    sqliteTemplate: string;
  }
}

/**
 * What the run shares, made once in vitest's main process before any file starts: the `svc`
 * bundle the CLI suites run, and the PostgreSQL server. A `--project unit` run needs neither,
 * and a SQLite-only run (`--project sqlite`) no server.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const names = project.vitest.projects.map((p) => p.name);
  const stops: (() => Promise<void> | void)[] = [];
  if (names.some((n) => n !== 'unit')) stops.push(await provideBundle(project), await provideSqliteTemplate(project));
  if (names.some((n) => n.startsWith('postgres'))) stops.push(await providePostgres(project));
  return async () => {
    for (const stop of stops) await stop();
  };
}

/**
 * bin/svc.ts bundled once (about a second): a CLI suite starts hundreds of `svc` children, and
 * each loads one file instead of compiling a thousand modules from source (issue 27). It is
 * what the executable packs, built from the sources of this run; test/e2e/serve.ts still runs
 * the sources as `npm start` does. A folder per run, so runs side by side never share one.
 */
async function provideBundle(project: TestProject): Promise<() => void> {
  const dir = `node_modules/.cache/svc-test-bundle/${process.pid}`;
  project.provide('svcBundle', await bundleInto(dir));
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * The SQLite schema migrated once per run: a test env's data dir starts as a copy of this file,
 * where migrating each new one took ~40 ms of CPU over a thousand times a run (issue 27).
 */
async function provideSqliteTemplate(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-template-'));
  // Closing checkpoints the WAL into the file: the copy is the whole database.
  await openDatabase(dir, { create: true }).close();
  project.provide('sqliteTemplate', join(dir, DATABASE_FILE));
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * One PostgreSQL server for the whole run, started here, in vitest's main process: the kernel
 * stops it when the thread that started it dies (setpriv --pdeathsig), so it must not be a
 * worker's. Each test file takes a database of its own (test/postgres/db.ts).
 */
async function providePostgres(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide('pgAdminUrl', server.url);
  project.provide('pgMigratedTemplate', await migratedTemplate(server.url));
  return () => server.stop();
}

/**
 * The schema migrated once per run: a file copy of this database is a test's migrated store in
 * tens of milliseconds, where migrating each new database took ~300 ms. Nothing stays
 * connected to it, as CREATE DATABASE … TEMPLATE requires.
 */
async function migratedTemplate(adminUrl: string): Promise<string> {
  const name = 'svc_migrated_template';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = await openPostgres(url.toString());
  try {
    await migratePostgres(pool);
  } finally {
    await pool.end();
  }
  return name;
}
