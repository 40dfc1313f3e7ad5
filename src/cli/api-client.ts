import { request } from 'undici';
import { AppError, errorRegistry, type ErrorCode } from '../errors.ts';
import { sleep as realSleep } from '../lib/sleep.ts';
import { UsageError } from './io.ts';

export interface ApiClient {
  call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; data: unknown; headers: Record<string, unknown> }>;
}

export interface ApiClientOptions {
  server?: string | undefined;
  apiKey?: string | undefined;
  /** Retries of one request answered 429 or 5xx, or not answered (`--retries`, default 3). */
  retries?: unknown;
  /**
   * For many requests in a row (`svc send --batch`): a 429 asking to wait at most a
   * minute is the key's rate, waited through quietly and not counted as a retry.
   */
  paced?: boolean;
}

export interface ApiClientDeps {
  /** How the client waits between tries; tests pass one that does not take real seconds. */
  sleep?: (ms: number) => Promise<void>;
  /** Where the line saying it retries goes (stderr). */
  say?: (line: string) => void;
}

const DEFAULT_RETRIES = 3;
// Exponential back-off on 5xx and unanswered requests: 1 s, 2 s, 4 s … at most 30 s.
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
// A 429 asking for a longer wait (an exhausted monthly volume) is reported, not slept through.
const LONGEST_WAIT_MS = 60_000;
// A connection that failed with these never carried the request: retrying cannot send twice.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

type Envelope = { data?: unknown; error?: { code: string; message: string; details: unknown } } | null;
type Answer = { status: number; json: Envelope; headers: Record<string, unknown> };

/**
 * A Public API client over undici. An error envelope becomes an AppError with
 * the server's code. As the contract recommends, it waits `Retry-After` on 429
 * and backs off exponentially on 5xx, at most `retries` times, saying so each
 * time. A request that may have reached the server unanswered is retried only
 * when repeating it is safe: a GET, or a POST with an Idempotency-Key.
 */
export function createApiClient(opts: ApiClientOptions, deps: ApiClientDeps = {}): ApiClient {
  const server = (opts.server ?? process.env.SVC_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const key = opts.apiKey ?? process.env.SVC_API_KEY;
  if (!key) throw new UsageError('give --api-key or set SVC_API_KEY');
  const retries = retriesOf(opts.retries);
  const sleep = deps.sleep ?? realSleep;
  const say = deps.say ?? ((line: string) => void process.stderr.write(line + '\n'));

  async function once(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
    const res = await request(server + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.body.json().catch(() => null)) as Envelope;
    return { status: res.statusCode, json, headers: res.headers };
  }

  return {
    async call(method, path, body, headers = {}) {
      const repeatable = method === 'GET' || 'idempotency-key' in headers;
      for (let retry = 0; ;) {
        let answer: Answer;
        try {
          answer = await once(method, path, body, headers);
        } catch (e) {
          const code = (e as { code?: string }).code ?? '';
          const failure = new AppError('service_unavailable', `cannot reach ${server}: ${(e as Error).message}`);
          if (retry >= retries || (!repeatable && !NOT_SENT.has(code))) throw failure;
          const wait = backoff(retry);
          retry++;
          say(`${failure.message}: retrying in ${seconds(wait)} (retry ${retry} of ${retries})`);
          await sleep(wait);
          continue;
        }
        if (answer.status < 400) return { status: answer.status, data: answer.json?.data, headers: answer.headers };
        const error = errorOf(answer);
        const wait = waitBeforeRetry(answer, error, retry);
        if (wait !== undefined && opts.paced && answer.status === 429) {
          await sleep(wait);
          continue;
        }
        if (wait === undefined || retry >= retries) throw error;
        retry++;
        say(
          `${answer.status} ${error.code}: ${error.message}: retrying in ${seconds(wait)} (retry ${retry} of ${retries})`,
        );
        await sleep(wait);
      }
    },
  };
}

function retriesOf(value: unknown): number {
  if (value === undefined) return DEFAULT_RETRIES;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 100)
    throw new UsageError(`--retries wants a whole number 0-100, got ${JSON.stringify(value)}`);
  return n;
}

const backoff = (retry: number) => Math.min(BACKOFF_FIRST_MS * 2 ** retry, BACKOFF_MAX_MS);
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** The server's `Retry-After` in ms (integer seconds, contract "Errors"), or undefined. */
function retryAfterMs(answer: Answer): number | undefined {
  const v = Number(answer.headers['retry-after']);
  return Number.isFinite(v) && v >= 0 ? Math.max(1, v) * 1000 : undefined;
}

/** How long to wait before trying again, or undefined when trying again cannot help. */
function waitBeforeRetry(answer: Answer, error: AppError, retry: number): number | undefined {
  // The first request with this key is still being handled (a run interrupted a moment ago).
  if (error.code === 'idempotency_in_progress') return backoff(retry);
  if (answer.status === 429) {
    const wait = retryAfterMs(answer) ?? BACKOFF_FIRST_MS;
    return wait <= LONGEST_WAIT_MS ? wait : undefined;
  }
  if (answer.status >= 500) return retryAfterMs(answer) ?? backoff(retry);
  return undefined;
}

function errorOf(answer: Answer): AppError {
  const code = (answer.json?.error?.code ?? 'internal_error') as ErrorCode;
  const known = code in errorRegistry ? code : 'internal_error';
  const retryAfter = retryAfterMs(answer);
  const message = answer.json?.error?.message ?? `HTTP ${answer.status}`;
  return new AppError(
    known,
    // A wait too long to sleep through (a monthly volume) is still worth telling.
    retryAfter !== undefined && retryAfter > LONGEST_WAIT_MS
      ? `${message} (retry after ${seconds(retryAfter)})`
      : message,
    (answer.json?.error?.details as Record<string, unknown>) ?? null,
  );
}
