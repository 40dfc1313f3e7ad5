import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createHttpServer } from '../src/http/server.ts';
import type * as Limits from '../src/limits/constants.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SmtpRelay } from '../src/smtp/index.ts';
import { listenInbound } from './delivery-helpers.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { email } from './http-helpers.ts';
import { smtpTalk, type SmtpTalk } from './peers/smtp-talk.ts';
import { testRelay } from './relay-helpers.ts';

// This server's largest request is 2 MiB (the body limit and the message size limit), so
// that a budget of 2 MiB, the least --in-flight-bytes then takes, is filled with small bodies.
vi.mock('../src/limits/constants.ts', async (original) => {
  const m = await original<typeof Limits>();
  return { ...m, LIMITS: { ...m.LIMITS, httpBodyBytes: 2 * 1024 * 1024, messageBytes: 2 * 1024 * 1024 } };
});

// Issue 26, item 3: one server-wide budget of bytes in flight (here 2 MiB). What would pass it
// is refused (503 with Retry-After, 452 4.3.1) while the requests already in flight succeed,
// and the budget comes back when they end.

const KiB = 1024;
let env: TestEnv;
let key: string;
let base: { host: string; port: number };
let relay: SmtpRelay;
let smtpPort: number;
const sessions: SmtpTalk[] = [];

beforeAll(async () => {
  env = await createTestEnv({ inFlightBytes: '2MiB' });
  key = await env.key();
  const url = new URL(await env.server.listen({ port: 0, host: '127.0.0.1' }));
  base = { host: url.hostname, port: Number(url.port) };
  relay = testRelay(env.app, { maxSessions: 10 });
  smtpPort = await relay.listen();
});
afterAll(async () => {
  for (const s of sessions) s.close();
  await relay.close();
  await env.close();
});

/** A send of about `bytes` bytes, its body written only up to `written` bytes until `finish` (all by default). */
function post(bytes: number, written = Infinity) {
  const body = Buffer.from(JSON.stringify(email({ text: 'y'.repeat(bytes) })));
  let req!: ClientRequest;
  const response = new Promise<{ status: number; headers: IncomingMessage['headers']; body: any }>(
    (resolve, reject) => {
      req = request(
        {
          ...base,
          method: 'POST',
          path: '/v1/emails',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': body.length,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
    },
  );
  req.write(body.subarray(0, written));
  if (written >= body.length) req.end();
  return { response, finish: () => req.end(body.subarray(written)), abort: () => req.destroy() };
}

const inFlight = () => env.app.inFlight.stats().inFlight;

async function session(): Promise<SmtpTalk> {
  const s = await smtpTalk(smtpPort);
  sessions.push(s);
  expect(await s.reply()).toMatch(/^220 /);
  await s.send('EHLO client.test');
  expect(await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`)).toMatch(/^235 /);
  return s;
}

/** DATA on `s` (after MAIL FROM) with a body of `bytes` bytes; the reply to the final dot. */
async function data(s: SmtpTalk, bytes: number): Promise<string> {
  expect(await s.send('RCPT TO:<a@example.net>')).toMatch(/^250 /);
  expect(await s.send('DATA')).toMatch(/^354 /);
  const line = `${'z'.repeat(998)}\r\n`;
  s.write(
    `From: news@example.com\r\nTo: a@example.net\r\nSubject: big\r\n\r\n${line.repeat(Math.ceil(bytes / 1000))}.\r\n`,
  );
  return s.reply();
}

describe('the budget of bytes in flight on the API', () => {
  it('refuses the request that would pass it with 503 and Retry-After; the others succeed; capacity returns', async () => {
    // A holds 1.2 MiB of its body, the rest still to come; B fits beside it; C does not.
    const a = post(1200 * KiB, 1200 * KiB);
    await expect.poll(inFlight).toBeGreaterThanOrEqual(1200 * KiB);
    const b = await post(700 * KiB).response;
    expect(b.status).toBe(202);
    const held = post(700 * KiB, 700 * KiB);
    held.response.catch(() => {}); // aborted below
    await expect.poll(inFlight).toBeGreaterThanOrEqual(1900 * KiB);
    const c = await post(300 * KiB).response;
    expect(c.status).toBe(503);
    expect(c.headers['retry-after']).toBe('5');
    expect(c.body.error).toMatchObject({ code: 'server_busy' });
    // A small request still fits.
    expect((await post(1 * KiB).response).status).toBe(202);

    a.finish();
    expect((await a.response).status).toBe(202);
    held.abort();
    await expect.poll(inFlight).toBe(0);
    // Capacity is back: what was refused goes through.
    expect((await post(300 * KiB).response).status).toBe(202);
    expect(inFlight()).toBe(0);
    const metrics = (await env.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^svc_in_flight_bytes_limit 2097152$/m);
    expect(metrics).toMatch(/^svc_in_flight_refused_total [1-9]/m);
  });

  it('counts a chunked body as it arrives', async () => {
    const a = post(1500 * KiB, 1500 * KiB);
    await expect.poll(inFlight).toBeGreaterThanOrEqual(1500 * KiB);
    const body = JSON.stringify(email({ text: 'y'.repeat(800 * KiB) }));
    const s = await rawSocket(base.port);
    const head = `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    s.socket.write(head);
    // In chunks of 64 KiB, as a client streaming a body would send it.
    for (let at = 0; at < body.length; at += 64 * KiB) {
      const chunk = body.slice(at, at + 64 * KiB);
      s.socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
    }
    s.socket.write('0\r\n\r\n');
    const response = await s.response;
    expect(response).toMatch(/^HTTP\/1\.1 503 /);
    expect(response).toMatch(/"code":"server_busy"/);
    s.socket.destroy();
    a.finish();
    expect((await a.response).status).toBe(202);
    await expect.poll(inFlight).toBe(0);
  });

  it('holds the bytes that arrived, not those declared: a body that never comes holds nothing', async () => {
    const stalled: Socket[] = [];
    for (let i = 0; i < 7; i++) {
      const s = await rawSocket(base.port);
      s.socket.write(
        `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n`,
      );
      stalled.push(s.socket);
    }
    expect((await post(300 * KiB).response).status).toBe(202);
    expect(inFlight()).toBe(0);
    // A declared length over the body limit is still 413, not 503.
    const over = await rawSocket(base.port);
    over.socket.write(
      `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 2097153\r\n\r\n`,
    );
    expect(await over.response).toMatch(/^HTTP\/1\.1 413 /);
    for (const s of [...stalled, over.socket]) s.destroy();
  });

  it('holds a small body at its declared length until it is answered, and refuses it when that does not fit', async () => {
    const small = await rawSocket(base.port);
    small.socket.write(
      `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 16384\r\n\r\n`,
    );
    await expect.poll(inFlight).toBe(16 * KiB);
    small.socket.destroy();
    await expect.poll(inFlight).toBe(0);
    // With the budget all but taken, a small body that would pass it is refused before it is read.
    const a = post(2040 * KiB, 2040 * KiB);
    await expect.poll(inFlight).toBeGreaterThanOrEqual(2040 * KiB);
    const refused = await post(10 * KiB).response;
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'server_busy' });
    a.finish();
    expect((await a.response).status).toBe(202);
    await expect.poll(inFlight).toBe(0);
  });

  it('holds nothing for a small body without a key, nor for one whose client left while its key was checked', async () => {
    const head = (auth: string) =>
      `POST /v1/auth/login HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 1024\r\n\r\n`;
    // No key: counted as its bytes come, and none come.
    const take = vi.spyOn(env.app.inFlight, 'take');
    const login = await rawSocket(base.port);
    login.socket.write(head(''));
    await vi.waitFor(() => expect(take).toHaveBeenCalled());
    expect(take.mock.calls).toEqual([[0]]);
    expect(inFlight()).toBe(0);
    take.mockRestore();
    login.socket.destroy();
    // A key whose check is still running when its client goes away.
    let pass!: () => void;
    const held = new Promise<void>((resolve) => (pass = resolve));
    const real = env.app.keys.authenticateKept.bind(env.app.keys);
    const spy = vi.spyOn(env.app.keys, 'authenticateKept').mockImplementation(async (token) => {
      await held;
      return real(token);
    });
    try {
      const connections = () =>
        new Promise<number>((resolve, reject) =>
          env.server.server.getConnections((e, n) => (e ? reject(e) : resolve(n))),
        );
      const gone = await rawSocket(base.port);
      gone.socket.write(
        `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n`,
      );
      await vi.waitFor(() => expect(spy).toHaveBeenCalled());
      const open = await connections();
      gone.socket.destroy();
      await expect.poll(connections).toBe(open - 1);
      pass();
      await spy.mock.results[0]!.value;
      await expect.poll(inFlight).toBe(0);
      // And it stays so once the server has gone through the request's hooks.
      expect((await post(1 * KiB).response).status).toBe(202);
      expect(inFlight()).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });

  it('cuts a body that stalls after the request timeout and gives its bytes back', async () => {
    const server = createHttpServer(env.app, { requestTimeoutMs: 200 });
    const port = Number(new URL(await server.listen({ port: 0, host: '127.0.0.1' })).port);
    try {
      const s = await rawSocket(port);
      s.socket.write(
        `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`,
      );
      s.socket.write('x'.repeat(500 * KiB));
      await expect.poll(inFlight).toBe(500 * KiB);
      expect(await s.response).toMatch(/^HTTP\/1\.1 408 /);
      await expect.poll(inFlight).toBe(0);
      s.socket.destroy();
    } finally {
      await server.close();
    }
  });
});

/** A raw connection to the API; `response` is all it received until the server closed it or a whole reply came. */
async function rawSocket(port: number): Promise<{ socket: Socket; response: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const response = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString();
      if (/\r\n\r\n[\s\S]*\}$/.test(text) || /^HTTP\/1\.1 408 /.test(text)) resolve(text);
    });
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
  });
  return { socket, response };
}

describe('the budget of bytes in flight on the SMTP relay', () => {
  it('refuses at MAIL FROM by SIZE and at the final dot by count with 452 4.3.1; the others succeed', async () => {
    const first = await session();
    expect(await first.send('MAIL FROM:<news@example.com> SIZE=1400000')).toMatch(/^250 /);
    expect(inFlight()).toBe(1_400_000);

    const declared = await session();
    expect(await declared.send('MAIL FROM:<news@example.com> SIZE=1000000')).toMatch(/^452 4\.3\.1 /);

    const undeclared = await session();
    expect(await undeclared.send('MAIL FROM:<news@example.com>')).toMatch(/^250 /);
    expect(await data(undeclared, 1000 * KiB)).toMatch(/^452 4\.3\.1 /);
    expect(inFlight()).toBe(1_400_000);

    expect(await data(first, 1300 * KiB)).toMatch(/^250 /);
    expect(inFlight()).toBe(0);
    // Capacity is back.
    expect(await declared.send('MAIL FROM:<news@example.com> SIZE=1000000')).toMatch(/^250 /);
    expect(await data(declared, 900 * KiB)).toMatch(/^250 /);
    expect(await undeclared.send('MAIL FROM:<news@example.com>')).toMatch(/^250 /);
    expect(await data(undeclared, 1000 * KiB)).toMatch(/^250 /);
    expect(inFlight()).toBe(0);
  });

  it('gives back the hold of a session that goes away', async () => {
    const s = await session();
    expect(await s.send('MAIL FROM:<news@example.com> SIZE=1500000')).toMatch(/^250 /);
    expect(inFlight()).toBe(1_500_000);
    s.close();
    await s.closed;
    await expect.poll(inFlight).toBe(0);
  });
  it('gives back the hold of a session that goes away while its key is looked up', async () => {
    const s = await session();
    const keys = env.app.keys;
    const authenticate = keys.authenticate.bind(keys);
    let started!: () => void;
    const lookingUp = new Promise<void>((resolve) => (started = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let lookedUp: Promise<unknown> | undefined;
    // A slow store (PostgreSQL): the key is looked up while the client goes away.
    const spy = vi.spyOn(keys, 'authenticate').mockImplementation((token) => {
      started();
      lookedUp = answered.then(() => authenticate(token));
      return lookedUp as ReturnType<typeof authenticate>;
    });
    try {
      s.write('MAIL FROM:<news@example.com> SIZE=1500000\r\n');
      await lookingUp;
      const open = relay.sessions();
      s.close();
      await expect.poll(() => relay.sessions()).toBe(open - 1);
      answer();
      await lookedUp;
      await new Promise((resolve) => setImmediate(resolve));
      expect(inFlight()).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the budget of bytes in flight on the inbound MX', () => {
  it('refuses at MAIL FROM by SIZE and at the final dot by count with 452 4.3.1, and gives back on close', async () => {
    const { inbound, port } = await listenInbound(env);
    // Every address here is a return path: this test is about the bytes, not the recipients.
    const accepts = vi.spyOn(env.app.inbound, 'accepts').mockResolvedValue(true);
    const open = async () => {
      const s = await smtpTalk(port);
      sessions.push(s);
      expect(await s.reply()).toMatch(/^220 /);
      expect(await s.send('EHLO mx.example.net')).toMatch(/^250/);
      return s;
    };
    try {
      const first = await open();
      expect(await first.send('MAIL FROM:<> SIZE=1400000')).toMatch(/^250 /);
      expect(inFlight()).toBe(1_400_000);
      const declared = await open();
      expect(await declared.send('MAIL FROM:<> SIZE=1000000')).toMatch(/^452 4\.3\.1 /);
      const undeclared = await open();
      expect(await undeclared.send('MAIL FROM:<>')).toMatch(/^250 /);
      expect(await data(undeclared, 1000 * KiB)).toMatch(/^452 4\.3\.1 /);
      expect(inFlight()).toBe(1_400_000);
      first.close();
      await first.closed;
      await expect.poll(inFlight).toBe(0);
      expect(await declared.send('MAIL FROM:<> SIZE=1000000')).toMatch(/^250 /);
      expect(inFlight()).toBe(1_000_000);
    } finally {
      accepts.mockRestore();
      for (const s of sessions) s.close();
      await inbound.close();
    }
    await expect.poll(inFlight).toBe(0);
  });
});
