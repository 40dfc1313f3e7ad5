// The dashboard's usage and stats page and its audit log in a real browser (issue 31, items 5 and 6):
// emails sent through the API and delivered to, or refused by, a loopback MX peer; the charts'
// numbers, read through their tables and labels, are the stats API's; an action done in the page
// is in the audit log and its CSV export; a VIEWER is not linked to the log and the API refuses them.
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import { CHROMIUM, OWNER, seriousViolations, warnIfNoChromium } from './peers/dashboard.ts';
import { settle, startDeliveryEnv, startDestinations, type DeliveryEnv } from './delivery-helpers.ts';

warnIfNoChromium('dashboard-usage-audit.test.ts');

const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-1' };
interface Counts {
  queued: number;
  simulated: number;
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  bounced_by_category: Record<string, number>;
}
interface Stats {
  totals: Counts;
  buckets: (Counts & { start: string })[];
}
/** A row of the page's table of a chart: accepted (queued or simulated), then the other series. */
const cellsOf = (c: Counts) =>
  [c.queued + c.simulated, c.delivered, c.bounced, c.complained, c.opened, c.clicked].map(String);

describe.skipIf(!CHROMIUM)('usage, stats and the audit log in Chromium', () => {
  let dns: DnsServer;
  let mx: MxPeer;
  let d: DeliveryEnv;
  let base: string;
  let browser: Browser;
  const org = () => d.env.init.organization_id;
  const project = () => d.env.init.project_id;

  beforeAll(async () => {
    ({ dns, mx } = await startDestinations(['dest.test']));
    d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
    mx.behaviour.set('gone@dest.test', { rcpt: [550, '5.1.1 No such user here'] });
    mx.behaviour.set('full@dest.test', { rcpt: [552, '5.2.2 Mailbox full'] });
    // 12:00 UTC: three LIVE emails to four recipients: two delivered, one address unknown, one mailbox full
    // (retried); at 14:00 one TEST email.
    for (const to of [['ada@dest.test'], ['bob@dest.test', 'gone@dest.test'], ['full@dest.test']]) await d.send(to);
    await settle(d.env);
    // Two hours later the full mailbox's retries are over (at most 1 h): it bounces then.
    d.env.clock.advance(2 * 3_600_000);
    await settle(d.env);
    const test = await d.env.key({ env: 'TEST' });
    const res = await d.env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${test}` },
      payload: { from: 'news@sender.test', to: ['cy@dest.test'], subject: 'Hi', text: 'Hi' },
    });
    expect(res.statusCode, res.body).toBe(202);
    await d.env.app.accounts.createUser(VIEWER);
    await d.env.app.accounts.addMember(org(), { email: VIEWER.email, role: 'VIEWER' });
    base = await d.env.server.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await d?.env.close();
    await mx?.close();
    await dns?.close();
  });

  async function signedIn(user: { email: string; password: string }): Promise<Page> {
    const page = await (await browser.newContext({ acceptDownloads: true })).newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Emails' }).waitFor();
    return page;
  }

  /** The management API's answer to `path` for `user`, as a client other than the page sees it. */
  async function apiAs(user: { email: string; password: string }, path: string): Promise<Response> {
    const login = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    const { access_token } = ((await login.json()) as { data: { access_token: string } }).data;
    return fetch(`${base}${path}`, { headers: { authorization: `Bearer ${access_token}` } });
  }
  const dataOf = async <T>(res: Response) => ((await res.json()) as { data: T }).data;
  const stats = async (query: string) =>
    dataOf<Stats>(await apiAs(OWNER, `/v1/organizations/${org()}/projects/${project()}/stats?${query}`));

  /** Each row of the table named `caption`, as the texts of its cells. */
  async function rowsOf(page: Page, caption: string): Promise<string[][]> {
    const table = page.getByRole('table', { name: caption });
    await table.waitFor();
    const rows = await table.locator('tbody tr, tfoot tr').all();
    return Promise.all(rows.map((r) => r.locator('th, td').allInnerTexts()));
  }
  /** What the table should say: a row per bucket, then the totals, from the API's stats. */
  const expectedRows = (s: Stats, label: (start: string) => string) => [
    ...s.buckets.map((b) => [label(b.start), ...cellsOf(b)]),
    ['Total', ...cellsOf(s.totals)],
  ];

  it("shows this month's usage against the plan and charts the project's events as the stats API counts them", async () => {
    const page = await signedIn(OWNER);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();

    const usage = await dataOf<{ monthly_volume: { period: string; used: number } }>(
      await apiAs(OWNER, `/v1/organizations/${org()}/usage`),
    );
    expect(usage.monthly_volume).toMatchObject({ period: '2026-03', used: 4 });
    await expect
      .poll(() => page.locator('dt:has-text("Recipients in 2026-03") + dd').innerText())
      .toMatch(/^4 \(no limit\)/);

    // The default range: the last 7 days by day.
    const week = await stats('granularity=day');
    expect(week.totals).toMatchObject({ queued: 3, simulated: 1, delivered: 2, bounced: 2 });
    expect(week.totals.bounced_by_category).toEqual({ 'invalid-recipient': 1, 'mailbox-full': 1 });
    expect(await rowsOf(page, 'Events per day (UTC)')).toEqual(expectedRows(week, (s) => s.slice(0, 10)));
    const bounces = page.getByRole('img', { name: /^Bounces by category/ });
    expect(await bounces.getAttribute('aria-label')).toBe('Bounces by category: invalid-recipient 1, mailbox-full 1.');
    expect(await page.getByRole('listitem').allInnerTexts()).toEqual(
      expect.arrayContaining(['Accepted: 4', 'Delivered: 2', 'Bounced: 2', 'invalid-recipient: 1', 'mailbox-full: 1']),
    );
    expect(await seriousViolations(page)).toEqual([]);

    // The last 24 hours by hour: the LIVE sends at 12:00; the TEST one and the full mailbox's bounce at 14:00.
    await page.getByLabel('Range').selectOption({ label: 'Last 24 hours, by hour' });
    const day = await stats('granularity=hour');
    const hours = await rowsOf(page, 'Events per hour (UTC)');
    expect(hours).toEqual(expectedRows(day, (s) => s.replace('T', ' ').slice(0, 16)));
    expect(hours.filter((r) => r.slice(1).some((n) => n !== '0'))).toEqual([
      ['2026-03-15 12:00', '3', '2', '1', '0', '0', '0'],
      ['2026-03-15 14:00', '1', '0', '1', '0', '0', '0'],
      ['Total', '4', '2', '2', '0', '0', '0'],
    ]);
    expect(await page.getByRole('img', { name: /^Events per hour, totals: accepted 4, delivered 2/ }).count()).toBe(1);

    // 30 days by day, counted back from the server's today.
    await page.getByLabel('Range').selectOption({ label: 'Last 30 days, by day' });
    expect(await rowsOf(page, 'Events per day (UTC)').then((r) => r.length)).toBe(31);
    expect((await rowsOf(page, 'Events per day (UTC)'))[0]![0]).toBe('2026-02-14');
    await page.close();
  });

  it('lists an action done in the page in the audit log, newest first, and exports it as CSV', async () => {
    const page = await signedIn(OWNER);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('ci-deploy');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('status').waitFor();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Audit log' }).click();

    const log = await dataOf<{ action: string; actor: { name: string }; target_id: string }[]>(
      await apiAs(OWNER, `/v1/organizations/${org()}/audit-logs`),
    );
    expect(log[0]).toMatchObject({ action: 'api_key.create', actor: { name: OWNER.email } });
    const first = page.getByRole('row').nth(1);
    await expect.poll(() => first.getByRole('cell').allInnerTexts()).toContain('api_key.create');
    expect((await first.innerText()).includes(OWNER.email)).toBe(true);
    expect(await first.innerText()).toContain(log[0]!.target_id);
    expect(await page.getByRole('row').count()).toBe(log.length + 1);
    expect(await seriousViolations(page)).toEqual([]);

    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(file.suggestedFilename()).toBe(`audit-log-${org()}.csv`);
    const lines = readFileSync(await file.path(), 'utf8')
      .trim()
      .split('\n');
    expect(lines[0]).toMatch(/^id,created_at,action,actor_type,actor_id,actor_name,/);
    expect(lines).toHaveLength(log.length + 1);
    expect(lines[1]).toContain(`,api_key.create,user,`);
    expect(lines[1]).toContain(OWNER.email);
    await page.close();
  });

  it('links a VIEWER to the usage page but not to the audit log, which the API refuses them', async () => {
    const page = await signedIn(VIEWER);
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link', { name: 'Usage' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    const res = await apiAs(VIEWER, `/v1/organizations/${org()}/audit-logs`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    // Reached by its address anyway, the page says what the API answered and shows no log.
    await page.goto(`${base}/#/o/${org()}/p/${project()}/audit`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await nav.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('table', { name: 'Events per day (UTC)' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });
});
