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
