import { createHmac } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import { UnsafeAddressError, WEBHOOK_TIMEOUT_MS } from './url-guard.ts';

/** Stored responses are cut here (decisions.md: at most 4 KiB). */
export const RESPONSE_LIMIT = 4096;

/**
 * `X-Service-Signature: t=<t>,v1=<hex>`, HMAC-SHA256 keyed with the whole secret
 * (`whsec_` included) over `<t>.<raw body>`, t in Unix seconds (decisions.md, "Webhooks").
 */
export function sign(secret: string, body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
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
 */
export async function postSigned(
  agent: Dispatcher,
  url: string,
  secret: string,
  eventId: string,
  body: string,
  nowMs: number,
): Promise<PostOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Service-Webhook/1.0',
        'x-service-event-id': eventId,
        'x-service-signature': sign(secret, body, nowMs),
      },
      body,
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    const text = await readLimited(res.body);
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return {
      ok,
      http_status: res.statusCode,
      duration_ms: took(),
      error: ok ? null : `HTTP ${res.statusCode}`,
      response_body: scrub(text),
      refused: false,
    };
  } catch (e) {
    const refused = e instanceof UnsafeAddressError;
    return { ok: false, http_status: 0, duration_ms: took(), error: reasonOf(e), response_body: null, refused };
  }
}

/** The first RESPONSE_LIMIT bytes of a body; the rest is not read. */
async function readLimited(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_LIMIT) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString('utf8');
}

function reasonOf(e: unknown): string {
  if (e instanceof UnsafeAddressError) return e.message;
  const err = e as { name?: string; code?: string; message?: string };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'no answer within 10 s';
  return [err.code, err.message].filter(Boolean).join(': ') || String(e);
}
