// A running svc for the dashboard's browser tests: an app on a FakeClock with one owner, one
// organization and one project, its HTTP server on a port of its own, and headless Chromium.
import AxeBuilder from '@axe-core/playwright';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { initialize } from '../../src/accounts/index.ts';
import { createApp, type App, type AppOverrides } from '../../src/app.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createHttpServer } from '../../src/http/server.ts';
import { FakeClock } from '../../src/lib/clock.ts';
import { findChromium } from './chromium.ts';

export const CHROMIUM = findChromium();

/** Logs, once per file, why the file's browser tests are skipped. */
export function warnIfNoChromium(file: string): void {
  if (!CHROMIUM) console.warn(`${file} skipped: no Chromium here (apt-get install chromium, or set SVC_CHROMIUM)`);
}

export const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

export interface Dashboard {
  app: App;
  clock: FakeClock;
  base: string;
  browser: Browser;
  orgId: string;
  projectId: string;
  /** The owner's API key (LIVE) of the project. */
  apiKey: string;
  /** A new page in a context of its own (its own cookies), signed in as the user. */
  signedIn(user?: { email: string; password: string }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * `flags` are more settings of the server (`dnsServers`: a loopback resolver for domain checks);
 * `overrides.webhookCa` trusts a test receiver's CA.
 */
export async function startDashboard(
  now = '2026-11-28T09:00:00.000Z',
  flags: Record<string, unknown> = {},
  overrides: Pick<AppOverrides, 'webhookCa'> = {},
): Promise<Dashboard> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
  const clock = new FakeClock(now);
  const config = loadConfig({ flags: { ...flags, dataDir: join(dir, 'data') } });
  const app = await createApp(config, { ...overrides, clock, createDataDir: true });
  const init = await initialize(app.accounts, app.keys, {
    ...OWNER,
    org: 'Acme',
    project: 'Web',
    plan: 'UNLIMITED',
    acceptDpa: true,
  });
  const server: FastifyInstance = createHttpServer(app);
  const base = await server.listen({ port: 0, host: '127.0.0.1' });
  const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
  return {
    app,
    clock,
    base,
    browser,
    orgId: init.organization_id,
    projectId: init.project_id,
    apiKey: init.api_key.key,
    async signedIn(user = OWNER) {
      const page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${base}/`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Emails' }).waitFor();
      return page;
    },
    async close() {
      await closeBrowser(browser);
      server.server.closeAllConnections();
      await server.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Closes Chromium, waiting at most 10 s: a browser stuck under a loaded machine's two cores is
 * left to end with the test's process rather than hang the file's afterAll (say so on stderr).
 */
export async function closeBrowser(browser: Browser): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 10_000)));
  if ((await Promise.race([browser.close(), late])) === 'late') console.warn('Chromium did not close within 10 s');
  clearTimeout(timer);
}

/** The serious and critical accessibility violations axe-core finds on the page. */
export async function seriousViolations(page: Page, exclude?: string): Promise<string[]> {
  const axe = new AxeBuilder({ page });
  if (exclude) axe.exclude(exclude);
  const r = await axe.analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}
