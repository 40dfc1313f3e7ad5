import { isIP } from 'node:net';
import { getCACertificates } from 'node:tls';
import { Agent, buildConnector } from 'undici';
import {
  addressProblem,
  createGuardedLookup,
  UnsafeAddressError,
  WEBHOOK_TIMEOUT_MS,
  type ResolveAddresses,
} from './url-check.ts';

// The guard's rules live in url-check.ts, which needs no HTTP client: the webhooks service checks
// URLs with them in every command, while this agent (and undici) loads only for a POST.
export * from './url-check.ts';

export interface WebhookAgentOptions {
  resolve: ResolveAddresses;
  allowInsecure: boolean;
  /** Per-phase limit (connect, response headers, body idle); at most WEBHOOK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Extra trust anchors (PEM), added to node's default ones: the tests' CA. */
  ca?: string[];
}

/**
 * The keep-alive undici Agent webhook attempts go through. Each new connection is
 * guarded: an IP-literal host is checked here (net skips `lookup` for an IP), a
 * name through the guarded lookup; a refusal fails the request with
 * UnsafeAddressError. A pooled connection keeps going to the address checked when
 * it was opened. Redirects are not followed: undici's `request` only follows them
 * through the redirect interceptor, which must not be composed onto this agent,
 * so a 3xx is just a non-2xx answer. The caller still bounds a whole attempt to
 * 10 s (an AbortSignal): these timeouts are per phase.
 */
export function createWebhookAgent(opts: WebhookAgentOptions): Agent {
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  if (!(timeoutMs > 0 && timeoutMs <= WEBHOOK_TIMEOUT_MS)) {
    throw new RangeError(`timeoutMs must be in (0, ${WEBHOOK_TIMEOUT_MS}]`);
  }
  const base = buildConnector({
    timeout: timeoutMs,
    lookup: createGuardedLookup(opts.resolve, opts),
    ...(opts.ca ? { ca: [...getCACertificates('default'), ...opts.ca] } : {}),
  });
  const connect: buildConnector.connector = (options, callback) => {
    const problem = opts.allowInsecure
      ? undefined
      : options.protocol !== 'https:'
        ? 'not_https'
        : isIP(options.hostname)
          ? addressProblem(options.hostname)
          : undefined;
    // Answer asynchronously, as a real connection failure would.
    if (problem)
      process.nextTick(() => callback(new UnsafeAddressError(options.hostname, options.hostname, problem), null));
    else base(options, callback);
  };
  return new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 30_000 });
}
