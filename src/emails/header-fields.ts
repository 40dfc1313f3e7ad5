import { AppError } from '../errors.ts';
import { isReservedHeader } from './content.ts';

/**
 * The fields of a relayed message svc reads itself, and how the API's view lists the rest: shared
 * by the pass-through (raw-request.ts, loaded with the first raw message) and the relay's rebuild
 * (smtp/message.ts). Nothing here loads MIME libraries, so importing it costs nothing at start.
 */

/** The envelope of one message: MAIL FROM and the accepted RCPT TO addresses. */
export interface Envelope {
  mailFrom: string | null;
  rcptTo: string[];
}

/** `X-Service-Tags: a, b` gives the email's tags (the relay's counterpart of the API's `tags`). */
export const TAGS_HEADER = 'x-service-tags';

/**
 * `X-Service-Unsubscribe: one-click` or `off` asks for or refuses one-click unsubscribe for
 * this email (the API's `one_click_unsubscribe`); without it the project's setting applies.
 */
export const UNSUBSCRIBE_HEADER = 'x-service-unsubscribe';
const UNSUBSCRIBE_VALUES = new Map([
  ['one-click', true],
  ['off', false],
]);

/**
 * Fields of a relayed message that are not listed among its custom headers in the API's view:
 * the trace and authentication results of earlier hops (besides the contract's reserved names
 * and the MIME structure, which the view shows in its own fields).
 */
export const TRACE_FIELDS = new Set([
  'sender',
  'authentication-results',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'received-spf',
  'delivered-to',
  'x-original-to',
  'domainkey-signature',
]);

/**
 * `X-Service-Scheduled-At: 2026-12-01T09:00:00Z` or `in 1 hour` sends the email later (the API's
 * `scheduled_at`; decisions.md, "Scheduled sending").
 */
export const SCHEDULE_HEADER = 'x-service-scheduled-at';

/** RFC 5322 msg-id without its angle brackets: printable ASCII, one `@`, no spaces. */
const MESSAGE_ID = /^[\x21-\x3b\x3d\x3f-\x7e]+@[\x21-\x3b\x3d\x3f-\x7e]+$/;

/** The message's own fields that the API's view lists, unfolded; the first of repeats; tags, the unsubscribe choice and the schedule. */
export function listedHeaders(fields: { name: string; key: string; value: string }[]): {
  headers: Record<string, string>;
  tags: string[];
  unsubscribe?: boolean;
  scheduledAt?: string;
} {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  let tags: string[] = [];
  let unsubscribe: boolean | undefined;
  let scheduledAt: string | undefined;
  for (const { name, key, value } of fields) {
    if (key === SCHEDULE_HEADER) {
      scheduledAt = value.trim();
      continue;
    }
    if (key === TAGS_HEADER) {
      tags = value
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      continue;
    }
    if (key === UNSUBSCRIBE_HEADER) {
      unsubscribe = UNSUBSCRIBE_VALUES.get(value.toLowerCase());
      if (unsubscribe === undefined) {
        throw new AppError('invalid_request', `${name} must be one-click or off, not "${value.slice(0, 40)}"`);
      }
      continue;
    }
    if (isReservedHeader(key) || TRACE_FIELDS.has(key) || seen.has(key)) continue;
    seen.add(key);
    headers[name] = value;
  }
  return {
    headers,
    tags,
    ...(unsubscribe === undefined ? {} : { unsubscribe }),
    ...(scheduledAt === undefined ? {} : { scheduledAt }),
  };
}

/** The client's Message-ID without brackets, or null when it has none or one svc could not write back. */
export function messageIdOf(raw: string | undefined): string | null {
  const id = raw?.trim().replace(/^<|>$/g, '');
  return id && id.length <= 255 && MESSAGE_ID.test(id) ? id : null;
}
