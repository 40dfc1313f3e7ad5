// The HTTPS receiver of the webhook benchmarks (bench:webhooks, bench:accept with
// BENCH_WEBHOOK=1): 127.0.0.1, a certificate from a CA made for the run, which svc
// is told to trust; it counts events and their latency.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeCertificate } from '../test/peers/certificates.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { tempDir } from './lib.ts';

/** The receiver: a certificate for 127.0.0.1 signed by a CA of this run. */
export async function startReceiver() {
  const tls = await makeCertificate({ ips: ['127.0.0.1'] });
  const seen = new Map<string, number>();
  const latencies: number[] = [];
  const server = createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; created_at: string };
      seen.set(body.id, (seen.get(body.id) ?? 0) + 1);
      latencies.push(now - Date.parse(body.created_at));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { ca: tls.ca, port: (server.address() as AddressInfo).port, seen, latencies, server };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** svc children started from now on trust the receiver's CA and may post to 127.0.0.1; returns the CA file. */
export function trustReceiver(receiver: Receiver): string {
  const caFile = join(tempDir('webhooks-ca'), 'ca.pem');
  writeFileSync(caFile, receiver.ca);
  process.env.NODE_EXTRA_CA_CERTS = caFile;
  process.env.SVC_ALLOW_INSECURE_WEBHOOKS = '1';
  return caFile;
}

/** A webhook on every `simulated` event, written through the use case on a running server's data dir. */
export async function subscribe(dataDir: string, port: number): Promise<void> {
  const admin = createApp(loadConfig({ flags: { dataDir, allowInsecureWebhooks: true } }));
  const project = await admin.accounts.getProject('Default');
  await admin.webhooks.create(project.id, { url: `https://127.0.0.1:${port}/hooks`, events: ['simulated'] });
  await admin.close();
}
