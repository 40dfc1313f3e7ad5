import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sleep } from '../src/lib/sleep.ts';
import { startDeliveryEnv, startDestinations, type DeliveryEnv } from './delivery-helpers.ts';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import { testRelay } from './relay-helpers.ts';

// An accepted LIVE email starts delivery once committed, not at the engine's next tick: the
// test clock never moves here, so the tick never comes, and the email must still arrive.

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

/** Waits (real time, bounded) until the MX peer has a message for `address`. */
async function arrived(address: string): Promise<boolean> {
  // Bounded by time, not by turns: on a loaded machine a delivery can take seconds.
  for (const until = Date.now() + 15_000; Date.now() < until; await sleep(10)) {
    if (mx.received.some((m) => m.to.includes(address))) return true;
  }
  return false;
}

describe('an accepted LIVE email', () => {
  it('reaches the MX without the clock moving to the next tick (API)', async () => {
    const before = d.env.clock.now();
    await d.send(['api@dest.test']);
    expect(await arrived('api@dest.test')).toBe(true);
    expect(d.env.clock.now()).toBe(before);
  });

  it('reaches the MX without the clock moving to the next tick (SMTP relay)', async () => {
    const relay = testRelay(d.env.app);
    const port = await relay.listen();
    try {
      const before = d.env.clock.now();
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        ignoreTLS: true,
        auth: { user: 'apikey', pass: d.key },
      });
      await transport.sendMail({ from: 'news@sender.test', to: 'relay@dest.test', subject: 'Hi', text: 'Hello' });
      transport.close();
      expect(await arrived('relay@dest.test')).toBe(true);
      expect(d.env.clock.now()).toBe(before);
    } finally {
      await relay.close();
    }
  });

  it('reaches the MX without the clock moving to the next tick (a resend)', async () => {
    const id = await d.send(['again@dest.test']);
    expect(await arrived('again@dest.test')).toBe(true);
    // The first delivery's own passes could pick the copy up: the wake itself is what is checked.
    const wake = vi.spyOn(d.env.app.delivery(), 'wake');
    const before = d.env.clock.now();
    const copies = () => mx.received.filter((m) => m.to.includes('again@dest.test')).length;
    const { organization_id, project_id } = d.env.init;
    await d.env.app.emails.resend(organization_id, project_id, id, { type: 'cli', os_user: 'ops' });
    expect(wake).toHaveBeenCalledTimes(1);
    await expect.poll(copies, { timeout: 15_000, interval: 10 }).toBe(2);
    expect(d.env.clock.now()).toBe(before);
    wake.mockRestore();
  });
});
