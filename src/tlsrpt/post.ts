// A report by HTTPS (RFC 8460 section 5.2): one POST of the gzipped JSON, through the agent
// webhooks use, so a rua URL gets the same guard as a customer's webhook URL (no private or
// loopback address unless --allow-insecure-webhooks, no redirect followed).
import type { Dispatcher } from 'undici';

/** Per-attempt limit of a report's POST (a report is a few kilobytes). */
const POST_TIMEOUT_MS = 30_000;

/** POSTs `body` (application/tlsrpt+gzip) to `url` through `agent`; resolves to the answer's status. */
export function createReportPoster(agent: () => Promise<Dispatcher>) {
  return async (url: string, body: Buffer): Promise<number> => {
    // undici loads here: an admin command's app never posts a report.
    const { request } = await import('undici');
    const res = await request(url, {
      method: 'POST',
      dispatcher: await agent(),
      headers: { 'content-type': 'application/tlsrpt+gzip' },
      body,
      signal: AbortSignal.timeout(POST_TIMEOUT_MS),
    });
    await res.body.dump();
    return res.statusCode;
  };
}
