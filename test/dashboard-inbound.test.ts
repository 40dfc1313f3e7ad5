// The dashboard's Inbound page in a real browser (issue 34): a route made with its form on a
// receiving domain, a message handed to the inbound listener by a real SMTP client, listed
// with its outcome and authentication results, its reply text, and receiving on a domain's page.
import nodemailer from 'nodemailer';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundListener, type InboundListener } from '../src/smtp/index.ts';
import { CHROMIUM, seriousViolations, startDashboard, warnIfNoChromium, type Dashboard } from './peers/dashboard.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

warnIfNoChromium('dashboard-inbound.test.ts');

describe.skipIf(!CHROMIUM)('the Inbound page in Chromium', () => {
  let d: Dashboard;
  let dns: DnsServer;
  let page: Page;
  let inbound: InboundListener;
  let port: number;
  let domainId: string;

  beforeAll(async () => {
    // The authentication checks of a received message ask this loopback resolver, nothing outside.
    dns = await startDnsServer();
    d = await startDashboard(undefined, { dnsServers: dns.server });
    const domain = await d.app.domains.addDomain({ name: 'in.test', organization: d.orgId, project: d.projectId });
    domainId = domain.id;
    inbound = createInboundListener(d.app, {
      host: '127.0.0.1',
      port: 0,
      maxSessions: 5,
      idleTimeoutMs: 10_000,
      closeTimeoutMs: 50,
    });
    port = await inbound.listen();
    page = await d.signedIn();
  }, 60_000);

  afterAll(async () => {
    await inbound?.close();
    await d?.close();
    await dns?.close();
  });

  it("turns receiving on from the domain's page, which then lists its MX record", async () => {
    await page.goto(`${d.base}/#/o/${d.orgId}/p/${d.projectId}/domains/${domainId}`);
    await page.getByRole('button', { name: 'Receive mail' }).click();
    await page.getByRole('button', { name: 'Stop receiving mail' }).waitFor();
    expect(await page.getByText('on, its MX not seen yet').count()).toBe(1);
    expect(await page.locator('td', { hasText: 'inbound' }).count()).toBeGreaterThan(0);
  });

  it('adds a route with its form, and lists a message a client handed over, with its reply text', async () => {
    await page.getByRole('link', { name: 'Inbound' }).click();
    await page.getByText('No route yet.').waitFor();
    await page.getByLabel('Pattern').fill('Support@in.test');
    await page.getByLabel('Action').selectOption('hold');
    await page.getByRole('button', { name: 'Add route' }).click();
    await page.getByRole('cell', { name: 'support@in.test' }).waitFor();
    expect(await page.getByText('held for the API').count()).toBe(1);

    const t = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true });
    await t.sendMail({
      from: 'ada@outside.test',
      to: 'support@in.test',
      subject: 'Where is my order?',
      text: 'It has not come.\r\n\r\nOn Mon, 2 Nov 2026 at 09:00, Shop <support@in.test> wrote:\r\n> Shipped today\r\n',
    });
    t.close();
    await page.reload();
    await page.getByRole('link', { name: /2026-11-28/ }).click();
    await page.getByRole('heading', { name: 'Where is my order?' }).waitFor();
    expect(await page.locator('pre.received-text').first().textContent()).toBe('It has not come.');
    expect(await page.getByText(/SPF none/).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('deletes the route from its row', async () => {
    await page.getByRole('link', { name: '← Inbound' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No route yet.').waitFor();
  });
});
