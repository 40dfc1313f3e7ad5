import nodemailer from 'nodemailer';
import { afterEach, expect } from 'vitest';
import type { App } from '../src/app.ts';
import { createSmtpRelay, RELAY_DEFAULTS, type RelayOptions, type SmtpRelay } from '../src/smtp/index.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { smtpTalk, type SmtpTalk } from './peers/smtp-talk.ts';

/**
 * svc's SMTP relay as the tests run it: on loopback, a free port, AUTH allowed without TLS,
 * idle sessions closed after 10 s and a stop that waits 50 ms; `options` changes any of it.
 */
export function testRelay(app: App, options: Partial<RelayOptions> = {}): SmtpRelay {
  return createSmtpRelay(app, {
    ...RELAY_DEFAULTS,
    host: '127.0.0.1',
    port: 0,
    plainAuth: true,
    maxSessions: 5,
    idleTimeoutMs: 10_000,
    closeTimeoutMs: 50,
    ...options,
  });
}

/** A relay on loopback and a nodemailer client signed in to it with `apiKey`; `close` ends both. */
export async function relayClient(app: App, apiKey: string) {
  const relay = testRelay(app);
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: await relay.listen(),
    secure: false,
    ignoreTLS: true,
    auth: { user: 'apikey', pass: apiKey },
  });
  return {
    transport,
    close: async () => {
      transport.close();
      await relay.close();
    },
  };
}

/**
 * What the relay tests of one file share: the env and relay a test started and its cleanups,
 * all run after it (afterEach), and the steps of a session by hand.
 */
export function relaySuite() {
  let env: TestEnv | undefined;
  let relay: SmtpRelay | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];

  afterEach(async () => {
    await relay?.close();
    relay = undefined;
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  return {
    cleanups,
    /** The relay the test started. */
    relay: () => relay,
    startRelay: async (e: TestEnv, options: Partial<RelayOptions> = {}): Promise<number> => {
      relay = testRelay(e.app, { maxSessions: 20, ...options });
      return relay.listen();
    },
    testEnv: async (plan?: 'FREE' | 'UNLIMITED'): Promise<TestEnv> => {
      const e = await createTestEnv({}, plan);
      env = e;
      cleanups.push(() => e.close());
      return e;
    },
    /** Makes `e` the env emailRow reads (testEnv does it for the envs it makes). */
    useEnv: (e: TestEnv) => {
      env = e;
    },
    /** The row of an email of the test's env. */
    emailRow: async (id: string) =>
      (await env!.query<Record<string, any>>('SELECT * FROM emails WHERE id = ?', id))[0]!,
    /** A session that has said EHLO and authenticated with `key` (AUTH PLAIN). */
    authed: async (port: number, key: string): Promise<SmtpTalk> => {
      const s = await smtpTalk(port);
      cleanups.push(() => s.close());
      expect(await s.reply()).toMatch(/^220 /);
      await s.send('EHLO client.test');
      expect(await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`)).toMatch(/^235 /);
      return s;
    },
  };
}

/** A nodemailer client of the relay at `port`, signed in with the API key `pass`, without TLS. */
export function transport(port: number, pass: string, extra: Record<string, unknown> = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    auth: { user: 'apikey', pass },
    ...extra,
  });
}

/** The id of the key `key` (its prefix is stored, and is unique enough among a test's keys). */
export const keyIdOf = async (e: TestEnv, key: string) =>
  (await e.query<{ id: string }>('SELECT id FROM api_keys WHERE ? LIKE prefix || ?', key, '%'))[0]!.id;
/** The email id in the relay's reply to the final dot. */
export const idOf = (response: string) => /queued as (\S+)/.exec(response)?.[1] ?? '';

/** Sends one message on `s` by hand; resolves with the reply to its final dot. */
export async function data(s: SmtpTalk, from: string, to: string[], body: string): Promise<string> {
  const mail = await s.send(`MAIL FROM:<${from}>`);
  if (!mail.startsWith('250')) return mail;
  for (const t of to) await s.send(`RCPT TO:<${t}>`);
  const go = await s.send('DATA');
  if (!go.startsWith('354')) return go;
  s.write(`${body.replace(/\r?\n/g, '\r\n')}\r\n.\r\n`);
  return s.reply();
}

/** A plain message from news@example.com. */
export const simple = (to = 'a@example.net', subject = 'Hi') =>
  `From: News <news@example.com>\nTo: ${to}\nSubject: ${subject}\n\nHello\n`;
