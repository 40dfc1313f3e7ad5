import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSigned, sign } from '../src/webhooks/send.ts';
import { createWebhookAgent } from '../src/webhooks/url-guard.ts';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.ts';

// One attempt's POST against a real HTTPS receiver: what it sends, and what each
// way of answering (or not) comes to.
let receiver: WebhookReceiver;
let agent: Agent;
let silent: Server;
let url: string;
const SECRET = 'whsec_' + 'ab'.repeat(32);

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  agent = createWebhookAgent({
    resolve: (host) => Promise.resolve(host === 'hook.test' ? ['127.0.0.1'] : []),
    allowInsecure: true,
    ca: [receiver.ca],
  });
  url = `https://hook.test:${receiver.port}/in?x=1`;
  // Accepts connections and never says a word (not even the TLS handshake).
  silent = createServer(() => {});
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
});

afterAll(async () => {
  // Destroyed, not closed: the attempts given up on still hold their connections.
  await agent.destroy();
  await receiver.close();
  silent.close();
});

describe('postSigned', () => {
  it('sends the body, the event id and a signature over t.body, and keeps a 2xx answer', async () => {
    receiver.respond = () => ({ status: 202, body: 'thanks' });
    const out = await postSigned(agent, url, SECRET, 'evt_1', '{"a":1}', 1_700_000_000_000);
    expect(out).toMatchObject({ ok: true, http_status: 202, error: null, response_body: 'thanks', refused: false });
    const got = receiver.requests.at(-1)!;
    expect(got.path).toBe('/in?x=1');
    expect(got.body).toBe('{"a":1}');
    expect(got.headers['x-service-event-id']).toBe('evt_1');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-service-signature']).toBe(sign(SECRET, '{"a":1}', 1_700_000_000_000));
  });

  it('counts a non-2xx answer as a failure with its status', async () => {
    receiver.respond = () => ({ status: 410, body: 'gone' });
    const out = await postSigned(agent, url, SECRET, 'evt_2', '{}', Date.now());
    expect(out).toMatchObject({ ok: false, http_status: 410, error: 'HTTP 410', response_body: 'gone' });
  });

  it('keeps the first 4 KiB of a long answer and stops reading there', async () => {
    receiver.respond = () => ({ status: 200, body: 'x'.repeat(1024 * 1024) });
    const out = await postSigned(agent, url, SECRET, 'evt_3', '{}', Date.now());
    expect(out.ok).toBe(true);
    expect(out.response_body).toBe('x'.repeat(4096));
  });

  it('gives up on an answer that does not come within the limit', async () => {
    receiver.respond = () => ({ status: 200, delayMs: 5000 });
    const out = await postSigned(agent, url, SECRET, 'evt_4', '{}', Date.now(), 300);
    expect(out).toMatchObject({ ok: false, http_status: 0, error: 'no answer within 0.3 s', response_body: null });
    expect(out.duration_ms).toBeGreaterThanOrEqual(290);
    expect(out.duration_ms).toBeLessThan(2000);
  });

  it('gives up on a server that never finishes the handshake within the limit', async () => {
    const port = (silent.address() as AddressInfo).port;
    const out = await postSigned(agent, `https://hook.test:${port}/`, SECRET, 'evt_5', '{}', Date.now(), 300);
    expect(out).toMatchObject({ ok: false, http_status: 0, error: 'no answer within 0.3 s' });
  });

  it('reports a refused connection with its reason', async () => {
    const free = createServer();
    await new Promise<void>((done) => free.listen(0, '127.0.0.1', done));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((done) => free.close(() => done()));
    const out = await postSigned(agent, `https://hook.test:${port}/`, SECRET, 'evt_6', '{}', Date.now());
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/ECONNREFUSED/);
  });
});
