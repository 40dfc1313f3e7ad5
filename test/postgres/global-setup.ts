import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the run's PostgreSQL server (test/postgres/server.ts). */
    pgAdminUrl: string;
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
  return () => server.stop();
}
