import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MxPeer } from './peers/mx.ts';
import type { WebhookReceiver } from './peers/webhook-receiver.ts';
import { settle, startHookedDelivery, type DeliveryEnv } from './delivery-helpers.ts';
import { formatSnapshot } from '../src/top/format.ts';

// delivery_delayed (issue 35, item 2; decisions.md, "delivery_delayed"): a recipient deferred for
// the first time says so, and again once it has waited past 1 h, 4 h and 24 h: each once, as an
// event of the email, a webhook, and in svc top's counts.

let mx: MxPeer;
let d: DeliveryEnv;
let hooks: WebhookReceiver;
let close: () => Promise<void> = async () => {};
const HOUR = 3_600_000;

beforeAll(async () => {
  ({ mx, d, hooks, close } = await startHookedDelivery(['delivery_delayed', 'delivered'], {
    deliveryRetrySchedule: '1m,5m,30m,1h',
    deliveryMaxAge: '30h',
  }));
}, 60_000);
afterAll(() => close());

describe('delivery_delayed', () => {
  it('on the first deferral, then past 1 h, 4 h and 24 h, each once; then delivered', async () => {
    mx.behaviour.set('slow@dest.test', { rcpt: [451, '4.2.1 Mailbox busy, try again later'] });
    const id = await d.send(['slow@dest.test', 'fast@dest.test']);
    await settle(d.env);
    for (let waited = 0; waited < 25 * HOUR; waited += HOUR / 2) {
      d.env.clock.advance(HOUR / 2);
      await settle(d.env);
    }
    mx.behaviour.delete('slow@dest.test');
    d.env.clock.advance(HOUR);
    await settle(d.env);
    expect((await d.email(id)).status).toBe('DELIVERED');

    const delayed = (await d.events(id)).filter((e) => e.type === 'delivery_delayed');
    expect(delayed.map((e) => e.threshold)).toEqual(['first_deferral', '1h', '4h', '24h']);
    expect(delayed.every((e) => e.recipient === 'slow@dest.test')).toBe(true);
    expect(delayed[0]).toMatchObject({
      waited_seconds: 0,
      attempts: 1,
      smtp_code: 451,
      smtp_enhanced: '4.2.1',
      next_attempt_at: expect.any(String),
    });
    const waited = delayed.map((e) => e.waited_seconds as number);
    expect(waited[1]).toBeGreaterThanOrEqual(3600);
    expect(waited[2]).toBeGreaterThanOrEqual(4 * 3600);
    expect(waited[3]).toBeGreaterThanOrEqual(24 * 3600);

    const bodies = () => hooks.requests.map((r) => JSON.parse(r.body)).filter((b) => b.data?.email?.id === id);
    await expect
      .poll(async () => {
        await d.env.app.webhookDispatcher().runOnce();
        return bodies().filter((b) => b.type === 'email.delivery_delayed').length;
      })
      .toBe(4);
    expect(bodies().find((b) => b.type === 'email.delivery_delayed')!.data.event).toMatchObject({
      recipient: 'slow@dest.test',
      threshold: 'first_deferral',
    });
  });

  it('shows in svc top: the last minute counts delivery_delayed', async () => {
    mx.behaviour.set('again@dest.test', { rcpt: [451, '4.2.1 Mailbox busy'] });
    await d.send(['again@dest.test']);
    await settle(d.env);
    const snapshot = await d.env.app.topReader().snapshot();
    expect(snapshot.last_minute.delivery_delayed).toBe(1);
    expect(formatSnapshot(snapshot)).toMatch(/last minute: .*delivery_delayed 1/);
  });
});
