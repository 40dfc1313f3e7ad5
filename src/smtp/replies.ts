import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import type { SMTPServer } from 'smtp-server';
import { errorRegistry, toAppError } from '../errors.ts';

/** An error smtp-server answers with `responseCode` and the message as the reply text. */
export type SmtpReplyError = Error & { responseCode: number };

/** A reply: the basic code, and a text that starts with its enhanced status code (RFC 3463). */
export function reply(code: number, enhanced: string, text: string): SmtpReplyError {
  return Object.assign(new Error(`${enhanced} ${text.replace(/[\r\n]+/g, ' ')}`), { responseCode: code });
}

/**
 * Any failure of a use case as an SMTP reply: the error registry's code and enhanced
 * code (errors.ts; the SMTP door maps errors here and nowhere else), the error's own
 * message, and the first field that failed validation when there is one.
 */
export function smtpReplyOf(e: unknown): SmtpReplyError {
  const err = toAppError(e);
  const [code, enhanced] = errorRegistry[err.code].smtp;
  const fields = err.details?.fields;
  const first = Array.isArray(fields) ? (fields[0] as { field?: string; message?: string } | undefined) : undefined;
  const text = first?.field ? `${err.message}: ${first.field}: ${first.message ?? 'invalid'}` : err.message;
  return reply(code, enhanced, text);
}

const ENHANCED = /^([245])\.\d{1,3}\.\d{1,3} /;
const relays = new WeakSet<SMTPServer>();
let installed = false;

/**
 * smtp-server gives a handler's error reply a fixed enhanced code per basic code (550
 * is always 5.1.1, 452 always 4.2.2), but the relay must say 550 5.7.1 for an
 * unverified domain and 452 4.5.3 for volume (issue 14). For the servers passed here
 * only, a reply text that starts with an enhanced code of the same class is sent as
 * written, instead of behind a second code. Other smtp-server instances in the
 * process (a test's MX peers) are left alone.
 */
export function useOwnEnhancedCodes(server: SMTPServer): void {
  relays.add(server);
  if (installed) return;
  installed = true;
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const send = SMTPConnection.prototype.send;
  SMTPConnection.prototype.send = function (this: SMTPConnection, code, data, context) {
    const own =
      context === undefined &&
      typeof data === 'string' &&
      relays.has(this._server) &&
      ENHANCED.exec(data)?.[1] === String(code)[0];
    send.call(this, code, data, own ? false : context);
  };
}
