import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import { settle, startDeliveryEnv, startDestinations, type DeliveryEnv } from './delivery-helpers.ts';
import { destinationText } from '../src/top/format.ts';

// /metrics (issue 16, item 4): the counters and gauges an operator alerts on.

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;

beforeAll(async () => {
  ({ dns, mx } = await startDestinations());
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
});

afterAll(async () => {
  await d.env.close();
  await mx.close();
  await dns.close();
});

async function scrape(): Promise<string> {
  const res = await d.env.server.inject({ url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The value of one sample, by its name and labels as written. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  it('counts accepted emails and recipient outcomes, and shows the queue, the commit latency and the store', async () => {
    mx.behaviour.set('gone@dest.test', {
      rcpt: [550, '5.1.1 <gone@dest.test>: Recipient address rejected: User unknown'],
    });
    mx.behaviour.set('later@dest.test', { rcpt: [451, '4.7.1 Greylisted, please try again later'] });
    await d.send(['ok@dest.test', 'gone@dest.test', 'later@dest.test']);
    let text = await scrape();
    expect(sample(text, 'svc_emails_accepted_total{env="LIVE",source="API"}')).toBe(1);
    expect(sample(text, 'svc_queue_recipients')).toBe(3);
    expect(sample(text, 'svc_queue_oldest_seconds')).toBeGreaterThanOrEqual(0);

    await settle(d.env);
    text = await scrape();
    expect(sample(text, 'svc_recipient_outcomes_total{outcome="delivered",category="",type="",source="smtp"}')).toBe(1);
    expect(
      sample(
        text,
        'svc_recipient_outcomes_total{outcome="bounced",category="invalid-recipient",type="hard",source="smtp"}',
      ),
    ).toBe(1);
    expect(
      sample(text, 'svc_recipient_outcomes_total{outcome="deferred",category="greylisting",type="",source="smtp"}'),
    ).toBe(1);
    // The greylisted recipient waits for its retry.
    expect(sample(text, 'svc_queue_recipients')).toBe(1);
    expect(sample(text, 'svc_store_commit_seconds_count')).toBeGreaterThan(0);
    expect(sample(text, 'svc_store_bytes{file="database"}')).toBeGreaterThan(0);
    expect(sample(text, 'svc_destinations_throttled')).toBe(0);
    expect(sample(text, 'svc_smtp_relay_sessions')).toBe(0);
    // The HTTP server's own metrics are on the same page.
    expect(text).toContain('svc_http_requests_total');
  });

  it('shows a destination slowed down by a 421 with its concurrency', async () => {
    mx.behaviour.set('busy@dest.test', { rcpt: [421, '4.7.0 Too many connections, slow down'] });
    await d.send(['busy@dest.test']);
    await settle(d.env);
    const text = await scrape();
    expect(sample(text, 'svc_destinations_throttled')).toBe(1);
    expect(sample(text, 'svc_destination_concurrency{domain="dest.test"}')).toBeGreaterThanOrEqual(1);
    // svc top shows the same destination as throttled, with its concurrency and until when it pauses.
    const top = await d.env.app.topReader().snapshot();
    const dest = top.destinations.find((x) => x.domain === 'dest.test')!;
    // The greylisted recipient of the test before, and this one.
    expect(dest).toMatchObject({ throttled: true, waiting: 2, deferred: 2 });
    expect(dest.concurrency).toBe(sample(text, 'svc_destination_concurrency{domain="dest.test"}'));
    expect(dest.reason).toMatch(/421/);
    expect(destinationText(dest, 78)).toMatch(
      /^dest\.test\s+2\s+2\s+\d+\s+\d+ (throttled to \d+|paused to \d\d:\d\d:\d\d)$/,
    );
  });
});
