import nodemailer from 'nodemailer';
import type { App } from '../src/app.ts';
import { createSmtpRelay, RELAY_DEFAULTS, type RelayOptions, type SmtpRelay } from '../src/smtp/index.ts';

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
