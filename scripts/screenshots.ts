// npm run screenshots — a screenshot of every page of the web dashboard, at 1280x800 and at
// 390x844 (a phone), written to docs/screenshots/<page>-desktop.png and -phone.png.
//
// It runs svc from source on a FakeClock in a temporary data dir with one owner, one
// organization and one project (test/peers/dashboard.ts, the browser tests' harness), fills
// it through the HTTP API as a user would (emails, a template, a webhook, suppressions, a
// domain, an invitation), and drives Debian's Chromium (or SVC_CHROMIUM) with playwright-core.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { CHROMIUM, startDashboard, type Dashboard } from '../test/peers/dashboard.ts';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

if (!CHROMIUM) {
  console.error('no Chromium here: apt-get install chromium, or set SVC_CHROMIUM');
  process.exit(1);
}

/** Calls the API as `token` (a session or an API key) and answers `data`, or throws its error line. */
async function call(d: Dashboard, token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${d.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json().catch(() => ({}))) as { data?: unknown; error?: { message: string } };
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json.error?.message ?? ''}`);
  return json.data;
}

/** What a small team's project holds after a day: sends, a template, a webhook, a domain. */
async function fill(d: Dashboard): Promise<Record<'emails' | 'templates' | 'webhooks' | 'domains', string>> {
  const session = (await call(d, '', 'POST', '/v1/auth/login', {
    email: 'owner@example.com',
    password: 'owner-password-1',
  })) as { access_token: string };
  const t = session.access_token;
  const org = `/v1/organizations/${d.orgId}`;
  const project = `${org}/projects/${d.projectId}`;
  const key = (await call(d, t, 'POST', `${project}/api-keys`, { name: 'docs', env: 'TEST' })) as { key: string };
  const sends = [
    ['ada@example.org', 'Welcome to Acme, Ada', ['welcome']],
    ['bob@example.org', 'Your receipt for order #1042', ['receipt']],
    ['cy@example.org', 'Reset your password', ['password-reset']],
    ['dee@example.org', 'Your invoice for November', ['invoice']],
    ['eve@example.org', 'Sign-in from a new device', ['security']],
    ['finn@example.org', 'Your receipt for order #1043', ['receipt']],
  ] as const;
  let last = '';
  for (const [to, subject, tags] of sends) {
    d.clock.advance(2 * 60_000);
    const sent = (await call(d, key.key, 'POST', '/v1/emails', {
      from: 'hello@example.com',
      from_name: 'Acme',
      to: [to],
      subject,
      text: `Hello,\n\n${subject}.\n\nAcme`,
      html: `<h1>${subject}</h1><p>Hello,</p><p>Thanks for using Acme.</p>`,
      tags: [...tags],
    })) as { id: string };
    last = sent.id;
  }
  const template = (await call(d, t, 'POST', `${project}/templates`, {
    name: 'Welcome',
    slug: 'welcome',
    subject_template: 'Welcome to Acme, {{ name }}',
    html_template: '<h1>Welcome, {{ name }}</h1><p>Your account is ready.</p>',
    text_template: 'Welcome, {{ name }}. Your account is ready.',
    variables: { name: 'Ada' },
  })) as { id: string };
  const webhook = (await call(d, t, 'POST', `${project}/webhooks`, {
    url: 'https://hooks.example.com/svc',
    events: ['delivered', 'bounced', 'complained'],
  })) as { id: string };
  for (const email of ['left@example.org', 'typo@exmaple.org'])
    await call(d, t, 'POST', `${project}/suppressions`, { email, reason: 'MANUAL' });
  const domain = (await call(d, t, 'POST', `${org}/domains`, { name: 'example.com' })) as { id: string };
  await call(d, t, 'POST', `${org}/invitations`, { email: 'support@example.com', role: 'VIEWER' });
  return { emails: last, templates: template.id, webhooks: webhook.id, domains: domain.id };
}

async function shoot(page: Page, name: string): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    // Let the page settle: its first answers (a template's preview waits 300 ms for typing), a reflow.
    await page.waitForTimeout(1000);
    await page.screenshot({ path: `${OUT}${name}-${size.name}.png` });
  }
}

const d = await startDashboard();
try {
  mkdirSync(OUT, { recursive: true });
  const ids = await fill(d);
  const page = await (await d.browser.newContext()).newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${d.base}/`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await shoot(page, 'sign-in');
  await page.getByLabel('Email').fill('owner@example.com');
  await page.getByLabel('Password').fill('owner-password-1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Emails' }).waitFor();
  // Every page the header links to (an owner sees them all), by the name in its route.
  const anchors = await page.getByRole('navigation', { name: 'Pages' }).locator('a').all();
  const links = await Promise.all(anchors.map(async (a) => (await a.getAttribute('href')) ?? ''));
  const pages = links.map((hash) => ({ hash, name: hash.slice(hash.lastIndexOf('/') + 1) }));
  // And one of each thing a page lists: an email, a template in its editor, a webhook, a domain.
  for (const [list, name] of [
    ['emails', 'email'],
    ['templates', 'template'],
    ['webhooks', 'webhook'],
    ['domains', 'domain'],
  ] as const) {
    const listed = pages.find((p) => p.name === list)!;
    pages.push({ hash: `${listed.hash}/${ids[list]}`, name });
  }
  for (const { hash, name } of pages) {
    await page.goto(`${d.base}/${hash}`);
    await page.locator('main h1').first().waitFor();
    await shoot(page, name);
  }
  console.log(`wrote ${(pages.length + 1) * SIZES.length} screenshots to docs/screenshots/`);
} finally {
  await d.close();
}
