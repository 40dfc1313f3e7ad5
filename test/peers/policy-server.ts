import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * An HTTPS server on loopback that plays the MTA-STS policy hosts (`mta-sts.<domain>`) of the
 * tests' domains: each host answers the policy set for it, a status (a server in trouble), or 404.
 */
export interface PolicyServer {
  port: number;
  /** What each policy host answers: a policy's text, or an HTTP status. */
  policies: Map<string, string | number>;
  /** The hosts asked, in order. */
  fetches: string[];
  close(): Promise<void>;
}

export async function startPolicyServer(tls: { key: string; cert: string }): Promise<PolicyServer> {
  const policies = new Map<string, string | number>();
  const fetches: string[] = [];
  const server = createServer(tls, (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    fetches.push(host);
    const p = policies.get(host) ?? 404;
    if (typeof p === 'number') return void res.writeHead(p).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(p);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    policies,
    fetches,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
