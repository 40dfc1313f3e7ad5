// The web dashboard in a real browser (issue 31): headless Chromium against `svc`'s HTTP server
// on a port of its own, signing in through the management API with the refresh cookie, finding
// an email by recipient and reading its events. Skipped, with one line, where no Chromium is
// installed (.ci/run installs Debian's).
import AxeBuilder from '@axe-core/playwright';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { initialize } from '../src/accounts/index.ts';
import { createApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { createHttpServer } from '../src/http/server.ts';
import { DASHBOARD_CSP } from '../src/http/routes-web.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { findChromium } from './peers/chromium.ts';
import { closeBrowser } from './peers/dashboard.ts';

const CHROMIUM = findChromium();
if (!CHROMIUM)
  console.warn('dashboard-browser.test.ts skipped: no Chromium here (apt-get install chromium, or set SVC_CHROMIUM)');

describe.skipIf(!CHROMIUM)('the web dashboard in Chromium', () => {
  let dir: string;
  let app: App;
  let server: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let orgId: string;
  let projectId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
    app = await createApp(loadConfig({ flags: { dataDir: join(dir, 'data') } }), {
      clock: new FakeClock('2026-11-28T09:00:00.000Z'),
      createDataDir: true,
    });
    const init = await initialize(app.accounts, app.keys, {
      email: 'owner@example.com',
      password: 'owner-password-1',
      org: 'Acme',
      project: 'Web',
      plan: 'UNLIMITED',
      acceptDpa: true,
    });
    orgId = init.organization_id;
    projectId = init.project_id;
    server = createHttpServer(app);
    base = await server.listen({ port: 0, host: '127.0.0.1' });
    const send = (to: string, subject: string) =>
      fetch(`${base}/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${init.api_key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          from: 'news@example.com',
          to: [to],
          subject,
          text: 'Hello',
          html: '<p>Hello <img src="https://tracker.example/x.gif"></p>',
        }),
      });
    for (const [to, subject] of [
      ['ada@example.org', 'Welcome, Ada'],
      ['bob@example.org', 'Your receipt'],
      ['cy@example.org', 'Reset your password'],
    ] as const) {
      expect((await send(to, subject)).status).toBe(202);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
  }, 60_000);

  afterAll(async () => {
    if (browser) await closeBrowser(browser);
    server?.server.closeAllConnections();
    await server?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves one page with a strict policy: no inline script, no framing', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
    expect(DASHBOARD_CSP).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await fetch(`${base}/assets/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    // Gzipped where the client takes it, and revalidated by its tag.
    const gz = await fetch(`${base}/assets/app.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    const js = await gz.text();
    const plain = await fetch(`${base}/assets/app.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(js);
    const again = await fetch(`${base}/assets/app.js`, { headers: { 'if-none-match': gz.headers.get('etag')! } });
    expect([again.status, await again.text()]).toEqual([304, '']);
    const missing = await fetch(`${base}/assets/nothing.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it("refuses a wrong password with the API's message, then signs in and lands on the emails", async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // The browser logs each 401 and 404 the API answers (no cookie yet, the wrong password): those
    // are answers, not faults; a script error or any other console error is.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    await page.goto(`${base}/`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\S/);
    expect(await new AxeBuilder({ page }).analyze().then(serious)).toEqual([]);

    await page.getByLabel('Password').fill('owner-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Emails' }).waitFor();
    await page.getByRole('link', { name: 'Welcome, Ada' }).waitFor();
    expect(await page.getByRole('row').count()).toBe(4);
    expect(await new AxeBuilder({ page }).analyze().then(serious)).toEqual([]);
    // The refresh cookie signs in again after a reload; the access token was only in memory.
    await page.reload();
    await page.getByRole('link', { name: 'Your receipt' }).waitFor();
    expect(errors).toEqual([]);
  });

  it('finds an email by recipient and shows its events and its parts, the HTML in a sandbox', async () => {
    // A request the policy blocks may still be reported as started, then failed with 'csp': what
    // matters is that none leaves the browser, so every remote request must end that way.
    const remote = new Map<string, string>();
    const isRemote = (url: string) => !url.startsWith(base) && !url.startsWith('data:');
    page.on('request', (r) => isRemote(r.url()) && remote.set(r.url(), 'pending'));
    page.on('requestfinished', (r) => isRemote(r.url()) && remote.set(r.url(), 'fetched'));
    page.on('requestfailed', (r) => isRemote(r.url()) && remote.set(r.url(), r.failure()?.errorText ?? 'failed'));
    await page.getByLabel('Recipient').fill('cy@example.org');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    expect(page.url()).toContain('to_email=cy%40example.org');
    await page.getByRole('link', { name: 'Reset your password' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(await page.locator('.events li strong').allTextContents()).toEqual(['simulated']);
    expect(await page.locator('pre.text').textContent()).toBe('Hello');
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).toBe('');
    // The email's remote image (a tracker) is not fetched: the frame inherits the page's policy.
    expect(await frame.contentFrame().locator('p').textContent()).toBe('Hello ');
    await expect.poll(() => [...remote.values()].includes('pending')).toBe(false);
    expect([...remote.values()].filter((how) => how !== 'csp')).toEqual([]);
    // The email's own HTML is the sender's, not the dashboard's (and axe cannot enter a frame with no scripts).
    expect(await new AxeBuilder({ page }).exclude('iframe.preview').analyze().then(serious)).toEqual([]);
  });

  it('resends the email as the owner, landing on the new one', async () => {
    const first = page.url();
    await page.getByRole('button', { name: 'Resend' }).click();
    await expect.poll(() => page.url()).not.toBe(first);
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await expect.poll(() => page.locator('.events li strong').allTextContents()).toEqual(['simulated']);
  });

  // The list answers while the user types: what they typed stays and is searched for.
  it('keeps a filter typed while the list is still loading', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const list = `**/v1/organizations/${orgId}/projects/${projectId}/emails?*`;
    await page.route(list, async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('link', { name: '← Emails' }).click();
    await page.getByLabel('Recipient').fill('cy@example.org');
    release();
    // Once the held request went on: a handler still running when unrouted would answer twice.
    await page.unrouteAll({ behavior: 'wait' });
    await expect.poll(() => page.getByRole('row').count()).toBeGreaterThan(3);
    expect(await page.getByLabel('Recipient').inputValue()).toBe('cy@example.org');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBe(3);
  });

  it('exports the emails the filter matches as CSV', async () => {
    // The list the search above left: the emails to cy@example.org.
    expect(page.url()).toContain('to_email=cy%40example.org');
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync(await file.path(), 'utf8')
      .trim()
      .split('\n');
    expect(csv).toHaveLength(3);
    expect(csv.slice(1).every((line) => line.includes('cy@example.org'))).toBe(true);
  });

  it('creates an API key shown once, which works at once, and revokes it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name').fill('from-the-dashboard');
    await page.getByLabel('Environment').selectOption('TEST');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('.notice code').textContent())!;
    expect(key).toMatch(/^svc_test_/);
    const list = () => fetch(`${base}/v1/emails`, { headers: { authorization: `Bearer ${key}` } });
    expect((await list()).status).toBe(200);
    expect(await new AxeBuilder({ page }).analyze().then(serious)).toEqual([]);
    // Shown once: after a reload the list has its prefix, never the key.
    await page.reload();
    const row = page.getByRole('row').filter({ hasText: 'from-the-dashboard' });
    await row.waitFor();
    expect(await page.content()).not.toContain(key);
    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: /Revoke/ }).click();
    await row.waitFor({ state: 'detached' });
    expect((await list()).status).toBe(401);
  });

  it('suppresses an address, imports a CSV (refused lines named), exports the list and removes one', async () => {
    await page.getByRole('link', { name: 'Suppressions' }).click();
    await page.getByRole('heading', { name: 'Suppressions' }).waitFor();
    await page.getByLabel('Address').fill('gone@example.org');
    await page.getByRole('button', { name: 'Suppress' }).click();
    await page.getByRole('cell', { name: 'gone@example.org', exact: true }).waitFor();
    await page.getByLabel('Import CSV').setInputFiles({
      name: 'list.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('email,reason\nbounced@example.org,HARD_BOUNCE\nnot-an-address,MANUAL\n'),
    });
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toMatch(/^Imported 1\. Refused: line 3 \(not-an-address\)/);
    await page.getByRole('cell', { name: 'bounced@example.org', exact: true }).waitFor();
    expect(await new AxeBuilder({ page }).analyze().then(serious)).toEqual([]);
    // A search keeps to the addresses containing the text (any case) with the reason chosen.
    await page.getByLabel('Search the list').fill('GONE@');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('cell', { name: 'bounced@example.org', exact: true }).waitFor({ state: 'detached' });
    expect(await page.getByRole('cell', { name: 'gone@example.org', exact: true }).count()).toBe(1);
    expect(page.url()).toContain('q=GONE%40');
    await page.getByLabel('Search the list').fill('');
    await page.getByLabel('With reason').selectOption('HARD_BOUNCE');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('cell', { name: 'gone@example.org', exact: true }).waitFor({ state: 'detached' });
    expect(await page.getByRole('cell', { name: 'bounced@example.org', exact: true }).count()).toBe(1);
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByRole('cell', { name: 'gone@example.org', exact: true }).waitFor();
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync(await file.path(), 'utf8');
    expect(csv).toMatch(/bounced@example\.org,HARD_BOUNCE/);
    expect(csv).toMatch(/gone@example\.org,MANUAL/);
    await page.getByRole('button', { name: 'Remove gone@example.org' }).click();
    await page.getByRole('cell', { name: 'gone@example.org', exact: true }).waitFor({ state: 'detached' });
    expect((await app.suppressions.list(projectId, 10)).map((r) => r.email)).toEqual(['bounced@example.org']);
  });

  it('shows a VIEWER the emails with no write action', async () => {
    await app.accounts.createUser({ email: 'viewer@example.com', password: 'viewer-password-1' });
    await app.accounts.addMember(orgId, { email: 'viewer@example.com', role: 'VIEWER' });
    const viewer = await (await browser.newContext()).newPage();
    viewer.setDefaultTimeout(10_000);
    await viewer.goto(`${base}/`);
    await viewer.getByLabel('Email').fill('viewer@example.com');
    await viewer.getByLabel('Password').fill('viewer-password-1');
    await viewer.getByRole('button', { name: 'Sign in' }).click();
    await viewer.getByRole('link', { name: 'Welcome, Ada' }).click();
    await viewer.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await viewer.locator('.events li').first().waitFor();
    // Its organizations (and so its role) are loaded once the switcher shows the organization.
    await expect.poll(() => viewer.getByLabel('Organization').inputValue()).toBe(orgId);
    expect(await viewer.getByRole('button', { name: 'Resend' }).count()).toBe(0);
    expect(await viewer.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    await viewer.getByRole('link', { name: 'Suppressions' }).click();
    await viewer.getByRole('cell', { name: 'bounced@example.org', exact: true }).waitFor();
    expect(await viewer.getByRole('button', { name: /Suppress|Remove/ }).count()).toBe(0);
    await viewer.context().close();
  });

  it('signs out: the cookie no longer signs in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });
});

/** The serious and critical accessibility violations axe-core finds. */
function serious(r: { violations: { id: string; impact?: string | null }[] }): string[] {
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}
