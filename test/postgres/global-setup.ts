import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migratePostgres, openPostgres } from '../../src/store/pg.ts';
import { startTestPostgres } from './server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the run's PostgreSQL server (test/postgres/server.ts). */
    pgAdminUrl: string;
    /** A database migrated to the latest schema, copied by migratedPgDatabase (test/postgres/db.ts). */
    pgMigratedTemplate: string;
  }
}

/**
 * One PostgreSQL server for the whole run, started here, in vitest's main process: the kernel
 * stops it when the thread that started it dies (setpriv --pdeathsig), so it must not be a
 * worker's. Each test file takes a database of its own (test/postgres/db.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
