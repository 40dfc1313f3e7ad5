import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundListener } from '../src/smtp/index.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { smtpTalk } from './peers/smtp-talk.ts';
import { testRelay } from './relay-helpers.ts';

// The 220 greeting names the host and says ESMTP once (smtp-server writes `ESMTP` before
// the banner; a banner that said it again made `ESMTP svc ESMTP relay`).

let env: TestEnv;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  env = await createTestEnv({ hostname: 'mta.svc.test' });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await env.close();
});

async function greeting(port: number): Promise<string> {
  const s = await smtpTalk(port);
  try {
    return await s.reply();
  } finally {
    s.close();
  }
}

const sessions = { maxSessions: 5, idleTimeoutMs: 10_000, closeTimeoutMs: 50 };

describe('the 220 greeting', () => {
  it('of the SMTP relay', async () => {
    const relay = testRelay(env.app);
    closers.push(() => relay.close());
    expect(await greeting(await relay.listen())).toBe('220 mta.svc.test ESMTP svc relay');
  });

  it('of the inbound MX', async () => {
    const inbound = createInboundListener(env.app, { host: '127.0.0.1', port: 0, ...sessions });
    closers.push(() => inbound.close());
    expect(await greeting(await inbound.listen())).toBe('220 mta.svc.test ESMTP svc');
  });
});
