import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, verifyDkim, type DeliveryEnv } from './delivery-helpers.ts';

// Click and open tracking end to end: a LIVE send through the real engine to a
// loopback MX, the delivered message parsed, and its links followed over HTTP.

const PUBLIC = 'https://track.svc.test';
const HTML = `<html><head><title>Hi</title></head><body>
<p>See <a href="https://shop.test/p?x=1&amp;y=2" style="color:red">the shop</a>,
<a href="mailto:help@sender.test">write to us</a>, <a href="#top">go up</a> or
<a data-svc-no-track href="https://sender.test/unsubscribe">unsubscribe</a>.</p>
</body></html>`;

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  // A trailing slash on --public-url must not double the one of /t/.
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port), publicUrl: `${PUBLIC}/` });
});

afterAll(async () => {
  await d.env.close();
  await mx.close();
  await dns.close();
});

let n = 0;
/** Sends HTML to a fresh address, lets the engine deliver it, and returns the id and the delivered message. */
async function sendAndDeliver(html = HTML) {
  const to = `reader${++n}@dest.test`;
  const id = await d.send([to], { html });
  await settle(d.env);
  const msg = mx.received.find((m) => m.to.includes(to));
  if (!msg) throw new Error(`nothing delivered to ${to}`);
  const parsed = await simpleParser(msg.raw);
  return { id, raw: msg.raw, html: parsed.html || '' };
}

const linksIn = (html: string, kind: 'c' | 'o') =>
  [...html.matchAll(new RegExp(`${PUBLIC}/t/${kind}/([A-Za-z0-9_-]+)`, 'g'))].map((m) => m[1]!);

const setTracking = (click: boolean, open: boolean) =>
  d.env.app.accounts.updateProjectSettings(d.env.init.project_id, { click_tracking: click, open_tracking: open });

async function apiEvents(id: string): Promise<any[]> {
  const res = await d.env.server.inject({
    method: 'GET',
    url: `/v1/emails/${id}/events`,
    headers: { authorization: `Bearer ${d.key}` },
  });
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

/** The token with one character in the middle changed. */
const edit = (token: string, i = 20) => token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);

const get = (url: string, headers: Record<string, string> = {}, extra: { remoteAddress?: string } = {}) =>
  d.env.server.inject({ method: 'GET', url, headers, ...extra });

describe('without tracking settings', () => {
  it('sends the HTML as the customer wrote it', async () => {
    const { html } = await sendAndDeliver();
    expect(html).toContain('href="https://shop.test/p?x=1&amp;y=2"');
    expect(linksIn(html, 'c')).toEqual([]);
    expect(linksIn(html, 'o')).toEqual([]);
  });
});

describe('with click and open tracking on', () => {
  let sent: Awaited<ReturnType<typeof sendAndDeliver>>;
  let click = '';
  let pixel = '';

  beforeAll(async () => {
    await setTracking(true, true);
    sent = await sendAndDeliver();
    click = linksIn(sent.html, 'c')[0] ?? '';
    pixel = linksIn(sent.html, 'o')[0] ?? '';
  });

  it('rewrites http(s) links and adds the pixel at send time, keeping the stored body and the DKIM signature', async () => {
    expect(linksIn(sent.html, 'c')).toHaveLength(1);
    expect(sent.html).toContain(`<a href="${PUBLIC}/t/c/${click}" style="color:red">the shop</a>`);
    expect(sent.html).not.toContain('https://shop.test');
    expect(sent.html).toContain('href="mailto:help@sender.test"');
    expect(sent.html).toContain('href="#top"');
    expect(sent.html).toContain('href="https://sender.test/unsubscribe"');
    expect(sent.html).toMatch(
      new RegExp(`<img src="${PUBLIC}/t/o/${pixel}" width="1" height="1" alt=""[^>]*/>\\s*</body>`),
    );
    expect((await d.email(sent.id)).html_body).toBe(HTML);
    expect((await verifyDkim(sent.raw, dns)).status).toBe('pass');
  });

  it('redirects a click to the original URL and records `clicked` with ip and user agent', async () => {
    const res = await get(`/t/c/${click}`, { 'user-agent': 'Mozilla/5.0 (Test)', 'x-forwarded-for': '198.51.100.7' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('https://shop.test/p?x=1&y=2');
    expect(res.headers['cache-control']).toContain('no-store');
    const clicked = (await apiEvents(sent.id)).filter((e) => e.type === 'clicked');
    // The socket's address: X-Forwarded-For is not trusted unless trustProxy is configured.
    expect(clicked).toEqual([
      expect.objectContaining({
        type: 'clicked',
        ip_address: '127.0.0.1',
        user_agent: 'Mozilla/5.0 (Test)',
        data: { url: 'https://shop.test/p?x=1&y=2', ip: '127.0.0.1', user_agent: 'Mozilla/5.0 (Test)' },
      }),
    ]);
  });

  it('stores an IPv4 client of a dual-stack socket in IPv4 form, and no user agent when none is sent', async () => {
    const res = await get(`/t/c/${click}`, { 'user-agent': '' }, { remoteAddress: '::ffff:203.0.113.9' });
    expect(res.statusCode).toBe(302);
    const last = (await apiEvents(sent.id)).at(-1);
    expect(last).toMatchObject({ type: 'clicked', ip_address: '203.0.113.9', user_agent: null });
  });

  it('records `opened` when the pixel loads and answers with a 1x1 GIF', async () => {
    const res = await get(`/t/o/${pixel}`, { 'user-agent': 'MailClient/1.0' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/gif');
    expect(res.headers['cache-control']).toContain('no-store');
    expect(res.rawPayload.subarray(0, 6).toString()).toBe('GIF89a');
    const opened = (await apiEvents(sent.id)).filter((e) => e.type === 'opened');
    expect(opened).toEqual([
      expect.objectContaining({ data: {}, ip_address: '127.0.0.1', user_agent: 'MailClient/1.0' }),
    ]);
  });

  it('refuses a forged or edited click token with 404 and records nothing', async () => {
    const before = (await apiEvents(sent.id)).length;
    for (const token of [edit(click), click.slice(0, -2), pixel, 'not-a-token', 'x'.repeat(3000)]) {
      const res = await get(`/t/c/${token}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers.location).toBeUndefined();
      expect(res.json().error.code).toBe('not_found');
    }
    expect(await apiEvents(sent.id)).toHaveLength(before);
  });

  it('answers a forged pixel with the image but records nothing', async () => {
    const before = (await apiEvents(sent.id)).length;
    const res = await get(`/t/o/${edit(pixel)}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/gif');
    expect(await apiEvents(sent.id)).toHaveLength(before);
  });

  it('answers HEAD without recording, and 405 for other methods', async () => {
    const before = (await apiEvents(sent.id)).length;
    const head = await d.env.server.inject({ method: 'HEAD', url: `/t/c/${click}` });
    expect(head.statusCode).toBe(302);
    expect(await apiEvents(sent.id)).toHaveLength(before);
    const post = await d.env.server.inject({ method: 'POST', url: `/t/c/${click}`, payload: {} });
    expect(post.statusCode).toBe(405);
    expect(post.json().error.code).toBe('method_not_allowed');
  });

  it("gives each email its own tokens: another email's link records on that email", async () => {
    const other = await sendAndDeliver('<body><a href="https://shop.test/p?x=1&amp;y=2">again</a></body>');
    const token = linksIn(other.html, 'c')[0]!;
    expect(token).not.toBe(click);
    expect((await get(`/t/c/${token}`)).statusCode).toBe(302);
    expect((await apiEvents(other.id)).filter((e) => e.type === 'clicked')).toHaveLength(1);
  });

  it('tracks only what is turned on', async () => {
    await setTracking(false, true);
    const onlyOpens = await sendAndDeliver();
    expect(linksIn(onlyOpens.html, 'c')).toEqual([]);
    expect(linksIn(onlyOpens.html, 'o')).toHaveLength(1);
    await setTracking(true, false);
    const onlyClicks = await sendAndDeliver();
    expect(linksIn(onlyClicks.html, 'c')).toHaveLength(1);
    expect(linksIn(onlyClicks.html, 'o')).toEqual([]);
  });

  it('sends a text-only email unchanged', async () => {
    const to = `plain${++n}@dest.test`;
    const id = await d.send([to], { html: undefined, text: 'See https://shop.test/p' });
    await settle(d.env);
    const msg = mx.received.find((m) => m.to.includes(to))!;
    expect((await simpleParser(msg.raw)).text).toContain('https://shop.test/p');
    expect((await d.email(id)).status).toBe('DELIVERED');
  });
});

describe('project settings', () => {
  it('refuses unknown keys by name and non-boolean values with request_validation_failed', async () => {
    const update = (s: unknown) => d.env.app.accounts.updateProjectSettings(d.env.init.project_id, s);
    await expect(update({ click_tracking: true, bogus: 1, clickTracking: true })).rejects.toMatchObject({
      code: 'request_validation_failed',
      status: 422,
      details: {
        fields: [expect.objectContaining({ field: 'bogus' }), expect.objectContaining({ field: 'clickTracking' })],
      },
    });
    await expect(update({ open_tracking: 'yes' })).rejects.toMatchObject({
      code: 'request_validation_failed',
      details: { fields: [expect.objectContaining({ field: 'open_tracking' })] },
    });
    await expect(update(['click_tracking'])).rejects.toMatchObject({ code: 'request_validation_failed' });
  });

  it('merges what is sent into what is stored', async () => {
    await setTracking(true, false);
    const p = await d.env.app.accounts.updateProjectSettings(d.env.init.project_id, { open_tracking: true });
    expect(p.settings).toEqual({
      click_tracking: true,
      open_tracking: true,
      one_click_unsubscribe: false,
      relay_tracking: false,
    });
    expect(await d.env.app.accounts.getProjectSettings(d.env.init.project_id)).toEqual(p.settings);
  });
});
