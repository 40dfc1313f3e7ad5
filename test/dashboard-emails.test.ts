// The emails list's search in a real browser (issue 31, items 2 and 8): by subject, by source (an
// email relayed over SMTP) and by the API key that sent it; the CSV export of a subject search; a
// VIEWER's form without the key filter; and the page at 390 px wide. Skipped, with one line,
// where no Chromium is installed.
import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpRelay } from '../src/smtp/index.ts';
import { CHROMIUM, seriousViolations, startDashboard, warnIfNoChromium, type Dashboard } from './peers/dashboard.ts';
import { testRelay } from './relay-helpers.ts';

warnIfNoChromium('dashboard-emails.test.ts');

/** Run in the page: how wide its content is, scrolled sideways or not (the DOM's types are not in this file's). */
const pageWidth = () =>
  (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
    .scrollWidth;

const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-1' };

describe.skipIf(!CHROMIUM)("the emails list's search in Chromium", () => {
  let d: Dashboard;
  let relay: SmtpRelay;
  let page: Page;
  let billingKeyId: string;

  beforeAll(async () => {
    d = await startDashboard();
    const billing = await d.app.keys.createKey(d.projectId, { name: 'billing', env: 'TEST' });
    billingKeyId = billing.id;
    const send = async (key: string, to: string, subject: string) => {
      const res = await fetch(`${d.base}/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'news@example.com', to: [to], subject, text: 'Hello' }),
      });
      expect(res.status).toBe(202);
    };
    await send(d.apiKey, 'ada@example.org', 'Welcome, Ada');
    await send(d.apiKey, 'bob@example.org', 'Your March INVOICE');
    await send(billing.key!, 'cy@example.org', 'Invoice 42 is ready');
    await send(billing.key!, 'eve@example.org', 'Password changed');
    // A subject and an address with no place to break: the list must still fit a phone.
    await send(d.apiKey, `${'long'.repeat(30)}@example.org`, `Statement_${'x'.repeat(150)}`);
    relay = testRelay(d.app);
    const port = await relay.listen();
    await nodemailer
      .createTransport({ host: '127.0.0.1', port, ignoreTLS: true, auth: { user: 'apikey', pass: d.apiKey } })
      .sendMail({ from: 'news@example.com', to: 'dee@example.org', subject: 'Relayed newsletter', text: 'x' });
    await d.app.accounts.createUser(VIEWER);
    await d.app.accounts.addMember(d.orgId, { email: VIEWER.email, role: 'VIEWER' });
    page = await d.signedIn();
  }, 60_000);

  afterAll(async () => {
    await relay?.close();
    await d?.close();
  });

  const subjects = (p: Page) => p.locator('tbody td a').allTextContents();
  /** The list with no filter, then the search the test fills in. */
  async function fresh(p: Page) {
    await p.goto(`${d.base}/#/o/${d.orgId}/p/${d.projectId}/emails`);
    await expect.poll(() => subjects(p)).toHaveLength(6);
  }

  it('finds emails by subject, without regard to case, and exports that search as CSV', async () => {
    await fresh(page);
    await page.getByLabel('Subject').fill('invoice');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => subjects(page)).toEqual(['Invoice 42 is ready', 'Your March INVOICE']);
    expect(page.url()).toContain('subject=invoice');
    expect(await seriousViolations(page)).toEqual([]);
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync(await file.path(), 'utf8')
      .trim()
      .split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[0]).toMatch(/^id,/);
    expect(csv.slice(1).map((line) => /Invoice 42 is ready|Your March INVOICE/.test(line))).toEqual([true, true]);
  });

  it('finds the email relayed over SMTP by its source', async () => {
    await fresh(page);
    await page.getByLabel('Source').selectOption('SMTP');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => subjects(page)).toEqual(['Relayed newsletter']);
    expect(await page.locator('tbody td').allTextContents()).toContain('SMTP');
    await page.getByLabel('Source').selectOption('API');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => subjects(page)).toHaveLength(5);
  });

  it('finds the emails one API key sent, with the subject search too', async () => {
    await fresh(page);
    const keyFilter = page.getByLabel('API key');
    // The project's keys come in their own request, beside the list's.
    await expect
      .poll(() => keyFilter.locator('option').allTextContents())
      .toEqual(expect.arrayContaining(['any', expect.stringMatching(/^billing \(/)]));
    await keyFilter.selectOption(billingKeyId);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => subjects(page)).toEqual(['Password changed', 'Invoice 42 is ready']);
    // The form keeps the search it shows, so another field narrows it.
    expect(await keyFilter.inputValue()).toBe(billingKeyId);
    await page.getByLabel('Subject').fill('PASSWORD');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => subjects(page)).toEqual(['Password changed']);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('gives a VIEWER the search without the key filter, since only a DEVELOPER may list keys', async () => {
    const viewer = await d.signedIn(VIEWER);
    await expect.poll(() => subjects(viewer)).toHaveLength(6);
    expect(await viewer.getByLabel('API key').count()).toBe(0);
    await viewer.getByLabel('Subject').fill('welcome');
    await viewer.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => subjects(viewer)).toEqual(['Welcome, Ada']);
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.context().close();
  });

  it('fits 390 px: the page never scrolls sideways, with the list and its filters', async () => {
    const phone = await d.signedIn();
    await phone.setViewportSize({ width: 390, height: 844 });
    await fresh(phone);
    await phone.getByLabel('Subject').fill('a');
    await phone.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => phone.url()).toContain('subject=a');
    await expect.poll(() => subjects(phone)).toHaveLength(6);
    expect(await phone.evaluate(pageWidth)).toBeLessThanOrEqual(390);
    expect(await seriousViolations(phone)).toEqual([]);
    await phone.context().close();
  });
});
