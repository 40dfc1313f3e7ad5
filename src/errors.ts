/**
 * One error type for the whole service. Every failure a client can cause is an
 * AppError with a code from the registry below; each door (HTTP, SMTP, CLI)
 * maps it to its protocol in exactly one place. The registry is the error table
 * of the specification plus the codes decided in design/decisions.md.
 */

export interface ErrorSpec {
  /** HTTP status of the code. */
  readonly status: number;
  /** SMTP reply (code and enhanced code) used by the SMTP relay. */
  readonly smtp: readonly [number, string];
  /** Default human message. */
  readonly message: string;
  /** Only an SMTP door answers it (a DMARC report's): no HTTP response carries it. */
  readonly smtpOnly?: true;
}

export const errorRegistry = {
  // The specification's table.
  domain_not_verified: {
    status: 422,
    smtp: [550, '5.7.1'],
    message: 'The from domain is not verified for this project',
  },
  reserved_email_header: { status: 422, smtp: [554, '5.6.0'], message: 'A custom header uses a reserved name' },
  all_recipients_suppressed: {
    status: 422,
    smtp: [550, '5.1.1'],
    message: 'Every recipient is on the suppression list',
  },
  request_validation_failed: { status: 422, smtp: [554, '5.6.0'], message: 'The request failed validation' },
  template_variable_missing: { status: 422, smtp: [554, '5.6.0'], message: 'A template variable was not supplied' },
  template_render_error: { status: 422, smtp: [554, '5.6.0'], message: 'The template could not be rendered' },
  not_found: { status: 404, smtp: [550, '5.1.0'], message: 'Not found' },
  conflict: { status: 409, smtp: [550, '5.0.0'], message: 'The resource already exists' },
  unauthorized: { status: 401, smtp: [535, '5.7.8'], message: 'Missing or invalid credentials' },
  forbidden: { status: 403, smtp: [550, '5.7.1'], message: 'Not allowed' },
  rps_exceeded: { status: 429, smtp: [421, '4.7.0'], message: 'Request rate exceeded' },
  // Decided in design/decisions.md.
  monthly_volume_exceeded: { status: 429, smtp: [452, '4.5.3'], message: 'Monthly sending volume exhausted' },
  daily_limit_exceeded: { status: 429, smtp: [452, '4.5.3'], message: 'Daily sending limit reached' },
  rate_limited: { status: 429, smtp: [421, '4.7.0'], message: 'Too many requests' },
  invalid_json: { status: 400, smtp: [501, '5.5.2'], message: 'The body is not valid JSON' },
  payload_too_large: { status: 413, smtp: [552, '5.3.4'], message: 'The body is too large' },
  method_not_allowed: { status: 405, smtp: [502, '5.5.1'], message: 'Method not allowed on this path' },
  idempotency_key_reused: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'This Idempotency-Key was used with a different request',
  },
  idempotency_in_progress: {
    status: 409,
    smtp: [451, '4.3.0'],
    message: 'A request with this Idempotency-Key is still being processed',
  },
  invalid_attachment: { status: 400, smtp: [554, '5.6.0'], message: 'An attachment is not valid base64' },
  attachment_too_large: { status: 422, smtp: [552, '5.3.4'], message: 'An attachment is larger than 10 MiB' },
  message_too_large: { status: 422, smtp: [552, '5.3.4'], message: 'The message is larger than 25 MiB' },
  invalid_header_value: { status: 400, smtp: [554, '5.6.0'], message: 'A header value contains CR or LF' },
  dpa_not_signed: {
    status: 422,
    smtp: [550, '5.7.1'],
    message: 'The organization has not signed the data-processing agreement',
  },
  trial_restricted: { status: 422, smtp: [550, '5.7.1'], message: 'The onboarding trial does not allow this' },
  plan_limit_exceeded: { status: 422, smtp: [550, '5.7.1'], message: "The organization's plan does not allow more" },
  invalid_request: { status: 400, smtp: [554, '5.6.0'], message: 'The request is not valid' },
  internal_error: { status: 500, smtp: [451, '4.3.0'], message: 'Internal server error' },
  service_unavailable: { status: 503, smtp: [421, '4.3.2'], message: 'The service is shutting down or not ready' },
  // RFC 3463 X.3.1, "mail system full": try again later (decisions.md, "A full disk and a memory budget").
  storage_full: { status: 503, smtp: [452, '4.3.1'], message: "The server's storage is full; try again later" },
  // A DMARC aggregate report that cannot be read, or is about a domain svc does not know
  // (decisions.md, "DMARC aggregate reports"): permanent, so its sender stops retrying.
  report_refused: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'The DMARC aggregate report was refused',
    smtpOnly: true,
  },
  // decisions.md, "a daily limit per reporter": a rate for the day, so a 4xx its sender retries
  // (tomorrow it is taken); 503 as the other "try again later" codes, though only SMTP answers it.
  report_limit_reached: {
    status: 503,
    smtp: [452, '4.3.1'],
    message: 'DMARC report limit reached for today',
    smtpOnly: true,
  },
  // decisions.md, "DKIM keys that rotate": a rotation waits for its new key's record to be seen.
  dkim_rotation_in_progress: {
    status: 409,
    smtp: [451, '4.3.0'],
    message: "A DKIM rotation is under way: the new key's record is not yet published",
  },
  // Receiving mail (decisions.md, "Receiving mail"): a message that has been round a forwarding
  // loop (RFC 5321 section 6.3) is refused for good; a sender or client past its rate waits.
  // Only SMTP answers them; the HTTP status is 503 as report_limit_reached's (every 429 over HTTP
  // carries a Retry-After of a known wait, which an SMTP-only code never gives).
  mail_loop: { status: 422, smtp: [554, '5.4.6'], message: 'Mail forwarding loop', smtpOnly: true },
  inbound_rate_limited: {
    status: 503,
    smtp: [451, '4.7.1'],
    message: 'Too many messages from this sender or client; try again later',
    smtpOnly: true,
  },
  // Scheduled sending (decisions.md): a cancel or a new time for an email that has started, is
  // final, or was cancelled; details.status says which.
  email_not_changeable: {
    status: 409,
    smtp: [550, '5.0.0'],
    message: 'The email is no longer waiting to be sent',
  },
  server_busy: {
    status: 503,
    smtp: [452, '4.3.1'],
    message: 'The server holds too many bytes in flight; try again shortly',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorRegistry;

export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | null;
  /** Seconds a client should wait before retrying (429s, 503s). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message?: string, details?: ErrorDetails | null, retryAfter?: number) {
    super(message ?? errorRegistry[code].message);
    this.name = 'AppError';
    this.code = code;
    this.details = details ?? null;
    this.retryAfter = retryAfter;
  }

  get status(): number {
    return errorRegistry[this.code].status;
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** Any thrown value as an AppError: unknown failures become internal_error. */
export function toAppError(e: unknown): AppError {
  if (isAppError(e)) return e;
  return new AppError('internal_error');
}
