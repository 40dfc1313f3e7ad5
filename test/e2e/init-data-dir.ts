import { initialize, type InitResult } from '../../src/accounts/index.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config/load.ts';

/**
 * A new data dir (and with `database`, that PostgreSQL database) with an owner, organization "A" and project "P" (UNLIMITED, DPA accepted),
 * opened for the test to add what it needs; close the app before `svc serve` takes it.
 */
export async function initDataDir(dataDir: string, database?: string): Promise<{ app: App; init: InitResult }> {
  const flags = { dataDir, ...(database ? { database } : {}) };
  const app = await createApp(loadConfig({ flags }), { createDataDir: true });
  const init = await initialize(app.accounts, app.keys, {
    email: 'o@example.com',
    password: 'pw-123456789',
    org: 'A',
    project: 'P',
    plan: 'UNLIMITED',
    acceptDpa: true,
  });
  return { app, init };
}
