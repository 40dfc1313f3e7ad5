import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCertificate } from './certificates.ts';

// A real HTTPS receiver for webhooks on 127.0.0.1, its certificate signed by a
// CA made at test time (give `ca` to the app as a trust anchor). It records
// every request and answers what `respond` says.

export interface ReceivedHook {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The status answered, once the answer has been written. */
  answered?: number;
}

export interface WebhookReceiver {
  port: number;
  /** PEM of the CA that signed the receiver's certificate. */
  ca: string;
  requests: ReceivedHook[];
  /** What to answer; 200 with an empty body unless set. `delayMs` holds this answer back. */
  respond: (req: ReceivedHook) => { status: number; body?: string; delayMs?: number };
  /** Waits this long before answering any request (keeps attempts in flight). */
  delayMs: number;
  close(): Promise<void>;
}

/** Names the certificate is valid for (tests point them at 127.0.0.1 with their DNS server). */
export const HOOK_NAMES = ['hook.test', 'private.hook.test', 'other.hook.test'];

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const tls = await makeCertificate({ names: HOOK_NAMES });
  const r: WebhookReceiver = {
    port: 0,
    ca: tls.ca,
    requests: [],
    respond: () => ({ status: 200 }),
    delayMs: 0,
    close: () => Promise.resolve(),
  };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook: ReceivedHook = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      r.requests.push(hook);
      const answer = r.respond(hook);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '', () => {
          hook.answered = answer.status;
        });
      };
      const delay = answer.delayMs ?? r.delayMs;
      if (delay <= 0) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, delay);
      timers.add(timer);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  r.port = (server.address() as AddressInfo).port;
  r.close = () => {
    for (const t of timers) clearTimeout(t);
    server.closeAllConnections();
    return new Promise<void>((done) => server.close(() => done()));
  };
  return r;
}
