// Every page of the web dashboard for every role, in a real browser (issue 31, items 6 and 8):
// the header links each role to the pages it may open and no others, and each page, with
// something in it, fits a 390 px wide phone without the page scrolling sideways.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, startDashboard, warnIfNoChromium, type Dashboard } from './peers/dashboard.ts';

warnIfNoChromium('dashboard-phone-roles.test.ts');

const ALL = [
  'Emails',
  'Usage',
  'Templates',
  'Webhooks',
  'Inbound',
  'Suppressions',
  'API keys',
  'Domains',
  'Members',
  'Audit log',
  'Settings',
];
/** What the header links, by role: keys need a DEVELOPER (role matrix), the audit log an ADMIN. */
const LINKED = {
  VIEWER: ALL.filter((p) => p !== 'API keys' && p !== 'Audit log'),
  DEVELOPER: ALL.filter((p) => p !== 'Audit log'),
  ADMIN: ALL,
} as const;

/** The page's full width, run in the browser (this file's types have no DOM). */
const pageWidth = () =>
  (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
    .scrollWidth;

describe.skipIf(!CHROMIUM)('the dashboard by role, and on a phone', () => {
  let d: Dashboard;
  /** The hash of one template, webhook and domain, so their own pages are visited too. */
  const detail: string[] = [];

  beforeAll(async () => {
    d = await startDashboard();
    const project = `/v1/organizations/${d.orgId}/projects/${d.projectId}`;
    const owner = await d.signedIn();
    // Through the API, as the page's own session: a long subject and address that cannot wrap.
    const token = await owner.evaluate(async () => {
      const r = await fetch('/v1/auth/refresh', { method: 'POST' });
      return ((await r.json()) as { data: { access_token: string } }).data.access_token;
    });
    const call = async (path: string, body: unknown, auth = `Bearer ${token}`) => {
      const r = await fetch(`${d.base}${path}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status, path).toBeLessThan(300);
      return ((await r.json()) as { data: { id: string } }).data;
    };
    const long = 'x'.repeat(120);
    await call(
      '/v1/emails',
      { from: 'news@example.com', to: [`${long}@example.org`], subject: long, text: 'Hi' },
      `Bearer ${d.apiKey}`,
    );
    const t = await call(`${project}/templates`, {
      name: 'Welcome',
      slug: 'welcome',
      subject_template: `Hello {{ name }} ${long}`,
      html_template: `<p>${long}</p>`,
    });
    const w = await call(`${project}/webhooks`, { url: `https://hooks.example.com/${long}`, events: ['delivered'] });
    const dom = await call(`/v1/organizations/${d.orgId}/domains`, { name: 'example.com' });
    await call(`${project}/suppressions`, { email: `${long}@example.net` });
    const at = `#/o/${d.orgId}/p/${d.projectId}`;
    detail.push(`${at}/templates/${t.id}`, `${at}/webhooks/${w.id}`, `${at}/domains/${dom.id}`);
    await owner.context().close();
    for (const role of ['VIEWER', 'DEVELOPER', 'ADMIN'] as const) {
      const email = `${role.toLowerCase()}@example.com`;
      await d.app.accounts.createUser({ email, password: `${role}-password-1` });
      await d.app.accounts.addMember(d.orgId, { email, role });
    }
  }, 90_000);

  afterAll(async () => {
    await d?.close();
  });

  const signedIn = (role: keyof typeof LINKED) =>
    d.signedIn({ email: `${role.toLowerCase()}@example.com`, password: `${role}-password-1` });
  const links = (page: Page) => page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();

  it.each(['VIEWER', 'DEVELOPER', 'ADMIN'] as const)('links a %s to the pages its role may open', async (role) => {
    const page = await signedIn(role);
    await expect.poll(() => links(page)).toEqual(LINKED[role]);
    await page.context().close();
  });

  it('fits every page, and one template, webhook and domain, in 390 px without sideways scrolling', async () => {
    const page = await signedIn('ADMIN');
    await page.setViewportSize({ width: 390, height: 844 });
    const nav = page.getByRole('navigation', { name: 'Pages' }).getByRole('link');
    await expect.poll(() => nav.count()).toBe(ALL.length);
    const hashes = [...(await Promise.all((await nav.all()).map((a) => a.getAttribute('href')))), ...detail];
    const wide: string[] = [];
    for (const hash of hashes) {
      await page.goto(`${d.base}/${hash!}`);
      await page.locator('main h1').first().waitFor();
      // The page's content is in once its list, form or record has come: no busy main is left.
      await expect.poll(() => page.locator('main[aria-busy="true"]').count()).toBe(0);
      await page.waitForLoadState('load');
      const width = await page.evaluate(pageWidth);
      if (width > 390) wide.push(`${hash!} is ${width} px wide`);
    }
    expect(wide).toEqual([]);
    await page.context().close();
  });
});
