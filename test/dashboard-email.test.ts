// One email in the dashboard, in a real browser (issue 31, item 3): LIVE emails delivered by the
// app's own engine to a real SMTP peer on loopback (its MX found through a loopback DNS server),
// the clock a FakeClock; then each recipient's timeline read in Chromium: why it bounced (the MX
// host, the reply, the category and the rule), why a deferred one waits and when it is tried
// next, its throttled destination, opens and clicks, headers and attachments.
import { simpleParser } from 'mailparser';
import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyReply, describeRule } from '../src/delivery/classify.ts';
import { sleep } from '../src/lib/sleep.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { CHROMIUM, seriousViolations, startDashboard, warnIfNoChromium, type Dashboard } from './peers/dashboard.ts';
import { signingDomainRows } from './signing-domain.ts';

warnIfNoChromium('dashboard-email.test.ts');

const GONE = [550, '5.1.1 The email account that you tried to reach does not exist'] as const;
const BUSY = [421, '4.7.0 Too many connections, try again later'] as const;
const PDF = Buffer.alloc(2048, 7);

describe.skipIf(!CHROMIUM)("one email's per-recipient timeline in Chromium", () => {
  let dns: DnsServer;
  let mx: MxPeer;
  let d: Dashboard;
  let key: string;
  let page: Page;

  beforeAll(async () => {
    dns = await startDnsServer();
    mx = await startMxPeer();
    for (const domain of ['dest.test', 'slow.test']) {
      dns.set(domain, { MX: [{ exchange: `mx.${domain}`, priority: 10 }] });
      dns.set(`mx.${domain}`, { A: ['127.0.0.1'] });
    }
    d = await startDashboard(undefined, {
      dnsServers: dns.server,
      mxPort: String(mx.port),
      hostname: 'mta.svc.test',
      publicUrl: 'https://track.svc.test',
      deliveryRetrySchedule: '1m,5m',
      deliveryMaxAge: '2h',
      workers: '1',
    });
    // A verified sending domain of the project, so that LIVE emails are accepted and delivered.
    const { statements } = signingDomainRows({
      organizationId: d.orgId,
      projectId: d.projectId,
      name: 'sender.test',
      selector: 'svc1',
      at: new Date(d.clock.now()).toISOString(),
    });
    for (const [sql, params] of statements) d.app.db.prepare(sql).run(...params);
    key = (
      await d.app.keys.createKey(d.projectId, {
        name: 'live',
        env: 'LIVE',
        permissions: 'FULL_ACCESS',
        expires_at: null,
      })
    ).key!;
    await d.app.delivery().start();
    page = await d.signedIn();
  }, 60_000);

  afterAll(async () => {
    await d?.close();
    await mx?.close();
    await dns?.close();
  });

  async function send(to: string[], subject: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await fetch(`${d.base}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'news@sender.test', to, subject, text: 'Hi there', ...extra }),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { data: { id: string } }).data.id;
  }

  /** Lets the engine work through what is due now for email `id` (real sockets, bounded). */
  async function settle(id: string): Promise<void> {
    const engine = d.app.delivery();
    for (let i = 0; i < 400; i++) {
      await engine.poke();
      const now = new Date(d.clock.now()).toISOString();
      const due = (await d.app.explainQueue(id)).some(
        (q) =>
          q.status === 'SENDING' || (q.status === 'QUEUED' && q.next_attempt_at !== null && q.next_attempt_at <= now),
      );
      if (engine.inflightCount() === 0 && !due) return;
      await sleep(25);
    }
    throw new Error(`delivery of ${id} did not settle within 10 s`);
  }

  const open = async (id: string, subject: string) => {
    await page.goto(`${d.base}/#/o/${d.orgId}/p/${d.projectId}/emails/${id}`);
    await page.getByRole('heading', { name: subject }).waitFor();
  };
  const recipient = (address: string) =>
    page.getByRole('region', { name: new RegExp(`^${address.replace('.', '\\.')}`) });
  const field = (scope: Locator, term: string) => scope.locator(`dt:text-is("${term}") + dd`).textContent();
  /** The attempts table's rows of a recipient, each as its cells' text. */
  const attempts = async (scope: Locator) =>
    Promise.all((await scope.locator('table.attempts tbody tr').all()).map((r) => r.locator('td').allTextContents()));
  const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

  it('finds a bounced email by recipient and reads why: the MX host, the reply, the category and the rule', async () => {
    mx.behaviour.set('gone@dest.test', { rcpt: [...GONE] });
    const id = await send(['gone@dest.test', 'ok@dest.test'], 'Your invoice', {
      headers: { 'X-Campaign': 'winter' },
      attachments: [
        { filename: 'invoice.pdf', content_type: 'application/pdf', content_base64: PDF.toString('base64') },
      ],
    });
    await settle(id);
    const started = when(d.clock.now());

    await page.getByLabel('Recipient').fill('gone@dest.test');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    await page.getByRole('link', { name: 'Your invoice' }).click();
    await page.getByRole('heading', { name: 'Your invoice' }).waitFor();

    const decided = classifyReply({ code: GONE[0], enhanced: null, text: GONE[1] }, { stage: 'rcpt' });
    const gone = recipient('gone@dest.test');
    await gone.waitFor();
    expect(await gone.locator('.status').textContent()).toBe('BOUNCED');
    expect(await field(gone, 'MX host')).toBe('mx.dest.test');
    expect(await field(gone, 'Last reply')).toBe(`${GONE[0]} ${GONE[1]}`);
    expect(await field(gone, 'Bounce')).toBe('hard');
    expect(await field(gone, 'Category')).toBe(decided.category);
    expect(await field(gone, 'Decided by')).toBe(describeRule(decided.rule));
    expect(await field(gone, 'Destination')).toBe('dest.test, not throttled');
    expect(await gone.locator('dt', { hasText: 'Why it waits' }).count()).toBe(0);
    expect(await attempts(gone)).toEqual([['1', started, 'mx.dest.test', 'bounced', `${GONE[0]} ${GONE[1]}`]]);

    const ok = recipient('ok@dest.test');
    expect(await ok.locator('.status').textContent()).toBe('DELIVERED');
    expect(await field(ok, 'Delivered (UTC)')).toBe(started);
    expect(await attempts(ok)).toEqual([['1', started, 'mx.dest.test', 'delivered', expect.stringMatching(/^250 /)]]);

    expect(await page.locator('dl.headers dt').allTextContents()).toEqual(['X-Campaign']);
    expect(await page.locator('dl.headers dd').allTextContents()).toEqual(['winter']);
    expect(await page.locator('table.attachments tbody td').allTextContents()).toEqual([
      'invoice.pdf',
      'application/pdf',
      '2.0 KB',
      'Download invoice.pdf',
    ]);
    // Downloaded, it is the bytes sent, under its own name.
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download invoice.pdf' }).click(),
    ]);
    expect(file.suggestedFilename()).toBe('invoice.pdf');
    expect(readFileSync(await file.path()).equals(PDF)).toBe(true);
    expect(await page.getByText('0 opens; 0 clicks').count()).toBe(1);
    expect(await seriousViolations(page, 'iframe.preview')).toEqual([]);
  });

  it('shows when a scheduled email goes out and its metadata (issue 35)', async () => {
    const at = d.clock.now() + 2 * 3_600_000;
    const id = await send(['later@dest.test'], 'Later on', {
      scheduled_at: new Date(at).toISOString(),
      metadata: { order_id: '42', tier: 'gold' },
    });
    await open(id, 'Later on');
    const main = page.locator('main');
    expect(await field(main, 'Status')).toBe('QUEUED');
    expect(await field(main, 'Scheduled (UTC)')).toBe(when(at));
    expect(await field(main, 'Metadata')).toBe('order_id=42, tier=gold');

    // Moved, then cancelled, from the page; both audited as the signed-in user.
    await page.getByLabel('New time').fill('in 5 hours');
    await page.getByRole('button', { name: 'Reschedule' }).click();
    const later = d.clock.now() + 5 * 3_600_000;
    await page.getByText(`Rescheduled for ${when(later)} UTC.`).waitFor();
    await expect.poll(() => field(main, 'Scheduled (UTC)')).toBe(when(later));
    await page.getByLabel('New time').fill('next week sometime');
    await page.getByRole('button', { name: 'Reschedule' }).click();
    await page
      .getByText(/scheduled_at/)
      .first()
      .waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel the send' }).click();
    await page.getByText('Cancelled: the email will not be sent.').waitFor();
    await expect.poll(() => field(main, 'Status')).toBe('CANCELED');
    expect(await page.getByRole('button', { name: 'Cancel the send' }).count()).toBe(0);
    const audited = d.app.db
      .prepare('SELECT action, actor_type FROM audit_logs WHERE target_id = ? ORDER BY rowid')
      .all(id) as { action: string; actor_type: string }[];
    expect(audited).toEqual([
      { action: 'email.reschedule', actor_type: 'user' },
      { action: 'email.cancel', actor_type: 'user' },
    ]);
    await settle(id);
    expect(mx.received.filter((m) => m.to.includes('later@dest.test'))).toEqual([]);
  });

  it('shows a deferred recipient: when it is tried next, why it waits, its throttled destination; then it follows it', async () => {
    mx.behaviour.set('busy@slow.test', { rcpt: [...BUSY] });
    const id = await send(['busy@slow.test'], 'Try later');
    await settle(id);
    const started = d.clock.now();
    await open(id, 'Try later');

    const decided = classifyReply({ code: BUSY[0], enhanced: null, text: BUSY[1] }, { stage: 'rcpt' });
    const busy = recipient('busy@slow.test');
    expect(await busy.locator('.status').textContent()).toBe('QUEUED');
    expect(await field(busy, 'Next attempt (UTC)')).toBe(when(started + 60_000));
    const reasons = await busy.locator('ul.waiting li').allTextContents();
    expect(reasons[0]).toBe(
      `attempt 1 was deferred (${decided.category}, decided by ${describeRule(decided.rule)}): ` +
        `${BUSY[0]} ${BUSY[1]} (mx.slow.test 127.0.0.1); tried again on the retry schedule`,
    );
    expect(reasons[1]).toMatch(/^slow\.test is throttled: at most \d+ connections at once.*Too many connections/);
    expect(await field(busy, 'Destination')).toMatch(/^slow\.test, throttled: at most \d+ connections at once/);
    expect(await attempts(busy)).toEqual([
      ['1', when(started), 'mx.slow.test', 'deferred', `${BUSY[0]} ${BUSY[1]} (mx.slow.test 127.0.0.1)`],
    ]);
    expect(await seriousViolations(page, 'iframe.preview')).toEqual([]);

    // The server takes it now; the open page reads the email again while a recipient waits.
    mx.behaviour.delete('busy@slow.test');
    d.clock.advance(60 * 60_000);
    await settle(id);
    expect((await d.app.explainQueue(id))[0]!.status).toBe('DELIVERED');
    // No reload: the page reads it again within its live interval (5 s).
    await expect.poll(() => busy.locator('.status').textContent(), { timeout: 10_000 }).toBe('DELIVERED');
    expect((await attempts(busy)).map((a) => [a[0], a[3]])).toEqual([
      ['1', 'deferred'],
      ['2', 'delivered'],
    ]);
    expect(await busy.locator('dt', { hasText: 'Next attempt' }).count()).toBe(0);
  });

  it('counts opens and clicks from the tracked message the recipient got', async () => {
    await d.app.accounts.updateProjectSettings(d.projectId, { click_tracking: true, open_tracking: true });
    const id = await send(['reader@dest.test'], 'Spring sale', {
      html: '<p>See <a href="https://shop.test/spring">the sale</a></p>',
    });
    await settle(id);
    const m = mx.received.find((r) => r.to.includes('reader@dest.test'));
    const html = (await simpleParser(m!.raw)).html || '';
    const token = (kind: 'c' | 'o') =>
      new RegExp(`https://track\\.svc\\.test/t/${kind}/([A-Za-z0-9_-]+)`).exec(html)![1];
    expect((await fetch(`${d.base}/t/o/${token('o')}`)).status).toBe(200);
    expect((await fetch(`${d.base}/t/c/${token('c')}`, { redirect: 'manual' })).status).toBe(302);

    await open(id, 'Spring sale');
    await page.getByText(/^1 open, first at .* UTC; 1 click$/).waitFor();
    expect(await page.locator('ul.clicks code').allTextContents()).toEqual(['https://shop.test/spring']);
    expect(await seriousViolations(page, 'iframe.preview')).toEqual([]);
  });
});
