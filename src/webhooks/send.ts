import type { Dispatcher } from 'undici';
import { hmacSha256 } from '../lib/hmac.ts';
import { UnsafeAddressError, WEBHOOK_TIMEOUT_MS } from './url-check.ts';

/** Stored responses are cut here (decisions.md: at most 4 KiB). */
export const RESPONSE_LIMIT = 4096;

/**
 * `X-Service-Signature: t=<t>,v1=<hex>`, HMAC-SHA256 keyed with the whole secret
 * (`whsec_` included) over `<t>.<raw body>`, t in Unix seconds (decisions.md, "Webhooks").
 */
export function sign(secret: string, body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = hmacSha256(secret, `${t}.${body}`).toString('hex');
  return `t=${t},v1=${v1}`;
}

/** What one POST came to. */
export interface PostOutcome {
  ok: boolean;
  /** 0 when no HTTP answer came. */
  http_status: number;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  /** The URL guard refused the address: nothing was sent. */
  refused: boolean;
}

/**
 * Secrets a receiver might echo back, scrubbed before a response is stored:
 * bearer tokens, our keys and webhook secrets, passwords in URLs, and
 * password/secret/token fields of JSON or forms.
 */
const SECRETS: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [scrubbed]'],
  [/\b(svc_(?:live|test|at|rt|inv)_)[A-Za-z0-9_-]{8,}/g, '$1[scrubbed]'],
  [/\bwhsec_[0-9a-fA-F]{16,}/g, 'whsec_[scrubbed]'],
  [/\b(sk|pk|rk)_(live|test)_[A-Za-z0-9]{8,}/g, '$1_$2_[scrubbed]'],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, '$1[scrubbed]@'],
  [/("?(?:password|passwd|secret|token|api[_-]?key|authorization)"?\s*[:=]\s*"?)[^"&\s,}]+/gi, '$1[scrubbed]'],
];

export function scrub(text: string): string {
  return SECRETS.reduce((s, [re, to]) => s.replace(re, to), text);
}

/**
 * POSTs a signed body through the guarded agent, within 10 s all told; a 2xx
 * is success. Never throws: a refusal by the URL guard, a timeout or a network
 * error is an outcome with its reason.
 *
 * It drives undici's `dispatch` with a small handler rather than `request()`:
 * no response stream, promise chain or AbortSignal per attempt, which takes a
 * quarter off the CPU of every POST (docs/performance.md, "Webhooks end to end").
 */
export function postSigned(
  agent: Dispatcher,
  url: string,
  secret: string,
  eventId: string,
  body: string,
  nowMs: number,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
): Promise<PostOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (out: Omit<PostOutcome, 'duration_ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...out, duration_ms: took() });
    };
    const answered = () => {
      const ok = status >= 200 && status < 300;
      const text = Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString('utf8');
      finish({
        ok,
        http_status: status,
        error: ok ? null : `HTTP ${status}`,
        response_body: scrub(text),
        refused: false,
      });
    };
    const failed = (e: unknown) =>
      finish({
        ok: false,
        http_status: 0,
        error: reasonOf(e),
        response_body: null,
        refused: e instanceof UnsafeAddressError,
      });
    // The whole attempt, connection included, ends at 10 s: a network timeout on real time,
    // not the domain clock (tests pass a shorter `timeoutMs`).
    const timer = setTimeout(() => {
      failed(new TimeoutError(timeoutMs));
      controller?.abort(new TimeoutError(timeoutMs));
    }, timeoutMs);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) c.abort(new TimeoutError(timeoutMs));
      },
      onResponseStart(_c, statusCode) {
        status = statusCode;
      },
      onResponseData(c, chunk) {
        chunks.push(chunk);
        size += chunk.length;
        // The first RESPONSE_LIMIT bytes are all that is kept: the rest is not read.
        if (size >= RESPONSE_LIMIT) {
          answered();
          c.abort(new Error('response cut at the limit'));
        }
      },
      onResponseEnd() {
        answered();
      },
      onResponseError(_c, err) {
        failed(err);
      },
    };
    try {
      const { origin, pathname, search } = new URL(url);
      agent.dispatch(
        {
          origin,
          path: pathname + search,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Service-Webhook/1.0',
            'x-service-event-id': eventId,
            'x-service-signature': sign(secret, body, nowMs),
          },
          body,
        },
        handler,
      );
    } catch (e) {
      failed(e);
    }
  });
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
  constructor(ms: number) {
    super(`no answer within ${ms / 1000} s`);
  }
}

function reasonOf(e: unknown): string {
  if (e instanceof UnsafeAddressError) return e.message;
  const err = e as { name?: string; code?: string; message?: string };
  if (e instanceof TimeoutError) return e.message;
  if (err.name === 'TimeoutError' || err.name === 'AbortError')
    return `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`;
  return [err.code, err.message].filter(Boolean).join(': ') || String(e);
}
