// The dashboard's templates and webhooks pages in a real browser (issue 31, items 5 and 6): the
// template editor's live preview rendered by the server's sandbox, its refusals, a test send
// through the send rules; a webhook to a real HTTPS receiver on loopback, its test ping, a
// delivery with its request and response, redelivery and secret rotation; what a VIEWER sees.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, seriousViolations, startDashboard, warnIfNoChromium, type Dashboard } from './peers/dashboard.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';

warnIfNoChromium('dashboard-templates-webhooks.test.ts');

/** Polls `read` until the matcher holds: a preview waits for typing to pause, then a render. */
const eventually = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 10_000 });

const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-1' };

describe.skipIf(!CHROMIUM)('the templates and webhooks pages in Chromium', () => {
  let d: Dashboard;
  let dns: DnsServer;
  let receiver: WebhookReceiver;
  let page: Page;
  const project = () => `/v1/organizations/${d.orgId}/projects/${d.projectId}`;
  /** The HTML preview frame's paragraph, read inside the sandbox. */
  const previewText = () => page.locator('iframe.preview').contentFrame().locator('p').textContent();
  const status = () => page.getByRole('status').allTextContents();

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    dns = await startDnsServer();
    dns.set('hook.test', { A: ['127.0.0.1'] });
    // The receiver is on loopback: --allow-insecure-webhooks lets the URL guard reach it.
    d = await startDashboard(
      undefined,
      { dnsServers: dns.server, allowInsecureWebhooks: true },
      { webhookCa: [receiver.ca] },
    );
    await d.app.accounts.createUser(VIEWER);
    await d.app.accounts.addMember(d.orgId, { email: VIEWER.email, role: 'VIEWER' });
    page = await d.signedIn();
  }, 60_000);

  afterAll(async () => {
    await d?.close();
    await dns?.close();
    await receiver?.close();
  });

  it('previews a draft as the server renders it, escaped, in a frame with no scripts, and creates it', async () => {
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByText('No template yet.').waitFor();
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByLabel('Name').fill('Welcome');
    await page.getByLabel('Slug').fill('welcome');
    await page.getByLabel('Subject').fill('Hi {{ name }}');
    await page.getByLabel('HTML').fill('<p>Hello {{ name }}</p><script>document.body.dataset.ran = "yes"</script>');
    await page.getByLabel('Text', { exact: true }).fill('Hello {{ name }}');
    await page.getByLabel(/^Variables/).fill('{"name": "<b>Ada</b>"}');
    // Autoescaped as a send's HTML is: the variable's markup is text.
    await eventually(previewText).toBe('Hello <b>Ada</b>');
    expect(await page.getByText('Subject: Hi <b>Ada</b>').count()).toBe(1);
    expect(await page.locator('.template-preview pre.text').textContent()).toBe('Hello <b>Ada</b>');
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await frame.contentFrame().locator('body').getAttribute('data-ran')).toBeNull();
    await page.getByLabel(/^Variables/).fill('{"name": "Ada"}');
    await eventually(previewText).toBe('Hello Ada');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    await eventually(status).toContain('Created Welcome.');
    expect(await seriousViolations(page, 'iframe.preview')).toEqual([]);
  });

  it("shows the change as one types, the API's refusals in place of the preview, and saves a new version", async () => {
    await page.getByLabel('HTML').fill('<p>Goodbye {{ name }}</p>');
    await eventually(previewText).toBe('Goodbye Ada');
    await page.getByLabel('HTML').fill('<p>Goodbye {{ name </p>');
    await eventually(status).toContainEqual(expect.stringMatching(/^The html could not be rendered: /));
    // The last good render stays, marked stale, beside the refusal.
    expect(await page.locator('.template-preview .stale iframe.preview').count()).toBe(1);
    await page.getByLabel('HTML').fill('<p>Goodbye {{ name }}</p>');
    await page.getByLabel(/^Variables/).fill('{}');
    await eventually(status).toContain("Template variable 'name' was not supplied");
    await page.getByLabel(/^Variables/).fill('{"name": ');
    await eventually(status).toContainEqual(expect.stringMatching(/^The variables are not valid JSON/));
    await page.getByLabel(/^Variables/).fill('{"name": "Ada"}');
    // The stale render says the same: wait for the new one, which is no longer marked stale.
    await eventually(() => page.locator('.template-preview .stale').count()).toBe(0);
    await eventually(previewText).toBe('Goodbye Ada');
    await page.getByRole('button', { name: 'Save and publish' }).click();
    await eventually(status).toContain('Saved and published: version 2.');
    const [t] = await d.app.templates.list(d.projectId);
    expect(t).toMatchObject({ version: 2, html_template: '<p>Goodbye {{ name }}</p>', variables: { name: 'Ada' } });
    expect(await seriousViolations(page, 'iframe.preview')).toEqual([]);
  });

  it('test-sends the saved template through the send rules: a TEST email is stored, LIVE needs a domain', async () => {
    await page.getByLabel('To', { exact: true }).fill('ada@example.org');
    await page.getByLabel('From', { exact: true }).fill('news@example.com');
    await page.getByLabel('Environment').selectOption('LIVE');
    await page.getByRole('button', { name: 'Send test' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toBe(
      'The domain example.com is not verified for this project',
    );
    await page.getByLabel('Environment').selectOption('TEST');
    await page.getByRole('button', { name: 'Send test' }).click();
    await eventually(status).toContain('Test send accepted: SIMULATED.');
    const [sent] = await d.app.emails.list(d.projectId, {});
    expect(sent).toMatchObject({ subject: 'Hi Ada', to_emails: ['ada@example.org'], status: 'SIMULATED' });
    const email = await d.app.emails.get(d.projectId, sent!.id as string);
    expect(email.html_body).toBe('<p>Goodbye Ada</p>');
    await page.getByRole('link', { name: 'Open the test email' }).click();
    await page.getByRole('heading', { name: 'Hi Ada' }).waitFor();
  });

  it('makes a layout, saves a draft in it without publishing, then publishes it and rolls back (issue 35)', async () => {
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByLabel('Name').fill('Brand');
    await page.getByLabel('Slug').fill('brand');
    await page.getByLabel(/^Use as a layout/).check();
    expect(await page.getByRole('combobox', { name: /^Layout/ }).count()).toBe(0);
    await page.getByLabel('Subject').fill('Brand');
    await page.getByLabel('HTML').fill('<div class="brand">{{ content }}</div>');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Brand' }).waitFor();
    await page.getByText(/a layout, version 1/).waitFor();

    await page.getByRole('link', { name: '← Templates' }).click();
    await page.getByRole('link', { name: 'Welcome' }).click();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    await page.getByRole('combobox', { name: /^Layout/ }).selectOption({ label: 'Brand' });
    // The preview renders the draft inside the layout, in the same sandbox.
    const frame = page.locator('iframe.preview').contentFrame();
    await eventually(() => frame.locator('div.brand p').textContent()).toBe('Goodbye Ada');
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await eventually(status).toContain('Saved version 3 as a draft: sends keep version 2.');
    const welcome = async () => (await d.app.templates.list(d.projectId)).find((t) => t.slug === 'welcome')!;
    expect(await welcome()).toMatchObject({ version: 3, published_version: 2 });
    const versions = page.locator('table.versions tbody tr');
    await eventually(() => versions.allTextContents()).toEqual([
      expect.stringMatching(/^3.*Brand.*saved/),
      expect.stringMatching(/^2.*none.*published/),
      expect.stringMatching(/^1.*none.*saved/),
    ]);
    await page.getByRole('button', { name: 'Publish version 3' }).click();
    await eventually(status).toContain('Published version 3: sends use it from now on.');
    expect((await welcome()).published_version).toBe(3);
    await page.getByRole('button', { name: 'Publish version 2' }).click();
    await eventually(status).toContain('Published version 2: sends use it from now on.');
    expect((await welcome()).published_version).toBe(2);
    await eventually(() => versions.nth(1).textContent()).toMatch(/published/);
    expect(await seriousViolations(page, 'iframe.preview')).toEqual([]);
  });

  it('adds an endpoint (the secret shown once), pings it, and shows a delivery with its request and response', async () => {
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByText('No endpoint yet.').waitFor();
    const url = `https://hook.test:${receiver.port}/hooks`;
    await page.getByLabel('Endpoint URL (HTTPS)').fill(url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.locator('.notice code.secret').textContent();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('link', { name: url }).click();
    await page.getByRole('heading', { name: url }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await eventually(status).toContain('Test ping succeeded: HTTP 200.');
    expect(JSON.parse(receiver.requests.at(-1)!.body)).toMatchObject({ type: 'test.ping' });

    // An email event for the endpoint, delivered by the dispatcher.
    const sent = await d.app.emails.sendAsMember(
      { orgId: d.orgId, projectId: d.projectId, env: 'TEST', actor: { type: 'cli', os_user: 'test' }, action: 'test' },
      { from: 'news@example.com', to: ['bo@example.org'], subject: 'Receipt', text: 'Thanks' },
    );
    await d.app.webhookDispatcher().runOnce();
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('link', { name: /^simulated/ }).click();
    await page.getByRole('heading', { name: 'simulated, attempt 1' }).waitFor();
    const payload = page.locator('.delivery pre.text').first();
    expect(JSON.parse((await payload.textContent())!)).toMatchObject({
      type: 'email.simulated',
      data: { email: { id: sent.id } },
    });
    expect(await page.locator('.delivery dd').first().textContent()).toBe('succeeded');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('redelivers an attempt, a new one that the dispatcher sends, and filters the deliveries by status', async () => {
    const before = receiver.requests.length;
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await eventually(status).toContain('Redelivery queued: the new attempt is listed once it is made.');
    await d.app.webhookDispatcher().runOnce();
    expect(receiver.requests.length).toBe(before + 1);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await eventually(() => page.getByRole('cell', { name: 'succeeded', exact: true }).count()).toBe(2);
    await page.getByLabel('With status').selectOption('pending');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No delivery with status pending.').waitFor();
    await page.getByLabel('With status').selectOption('succeeded');
    await page.getByRole('button', { name: 'Show' }).click();
    await eventually(() => page.getByRole('cell', { name: 'succeeded', exact: true }).count()).toBe(2);
  });

  it('rotates the secret (the new one shown once) and edits the endpoint', async () => {
    const [hook] = await d.app.webhooks.list(d.projectId);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = await page.locator('.notice code.secret').textContent();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    await page.getByText('Edit the endpoint').click();
    await page.getByLabel('every email event').uncheck();
    await page.getByLabel('bounced').check();
    await page.getByLabel('suppression.added').check();
    await page.getByLabel('Active').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await eventually(status).toContain('Saved.');
    expect(await d.app.webhooks.get(d.projectId, hook!.id)).toMatchObject({
      events: ['bounced', 'suppression.added'],
      is_active: false,
    });
    // The status line comes before the page has read the endpoint again.
    await eventually(() => page.getByText('Events: bounced, suppression.added. State: paused.').count()).toBe(1);
  });

  it('shows a VIEWER the templates, the preview and the deliveries, with no write action', async () => {
    const viewer = await d.signedIn(VIEWER);
    await viewer.getByRole('link', { name: 'Templates' }).click();
    await viewer.getByRole('link', { name: 'Welcome' }).click();
    await eventually(() => viewer.locator('iframe.preview').contentFrame().locator('p').textContent()).toBe(
      'Goodbye Ada',
    );
    expect(await viewer.getByLabel('HTML').isDisabled()).toBe(true);
    expect(
      await viewer
        .getByRole('button')
        .filter({ hasText: /Save|Delete|Send test/ })
        .count(),
    ).toBe(0);
    expect(await seriousViolations(viewer, 'iframe.preview')).toEqual([]);
    await viewer.getByRole('link', { name: 'Webhooks', exact: true }).click();
    expect(await viewer.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    await viewer.getByRole('link', { name: /^https:\/\/hook\.test/ }).click();
    await viewer.getByRole('cell', { name: 'succeeded', exact: true }).first().waitFor();
    await viewer
      .getByRole('link', { name: /^simulated/ })
      .first()
      .click();
    await viewer.getByRole('heading', { name: /^simulated, attempt/ }).waitFor();
    expect(
      await viewer
        .getByRole('button')
        .filter({ hasText: /Send test|Rotate|Delete|Redeliver|Save/ })
        .count(),
    ).toBe(0);
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.context().close();
  });

  it('answers the preview to a VIEWER and refuses them a test send; bad input gets the envelope', async () => {
    const login = await fetch(`${d.base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(VIEWER),
    });
    const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const post = (path: string, body: unknown) =>
      fetch(`${d.base}${project()}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await post('/templates/preview', {
      subject_template: 'Hi {{ n }}',
      text_template: 'x',
      variables: { n: 1 },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { subject: 'Hi 1', html: null, text: 'x' } });
    const bad = await post('/templates/preview', { subject_template: 'a\nb', extra: true });
    expect(bad.status).toBe(422);
    const envelope = (await bad.json()) as { error: { code: string; details: { fields: { field: string }[] } } };
    expect(envelope.error.code).toBe('request_validation_failed');
    expect(envelope.error.details.fields.map((f) => f.field).sort()).toEqual(['extra', 'subject_template']);
    const [t] = await d.app.templates.list(d.projectId);
    const refused = await post(`/templates/${t!.id}/test-send`, { to: 'a@example.org', from: 'b@example.com' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('forbidden');
  });
});
