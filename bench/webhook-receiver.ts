// The HTTPS receiver of the webhook benchmarks (bench:webhooks, bench:accept with
// BENCH_WEBHOOK=1): 127.0.0.1, a certificate from a CA made for the run, which svc
// is told to trust; it counts events and their latency.
//
// nginx (Debian's nginx-light, one worker) when it is installed: it answers a POST
// with 204 for ~40 µs of CPU, where a Node HTTPS server takes ~160 µs, so on this
// 2-core machine the receiver takes as little as it can of the cores svc runs on (a
// real receiver is on another machine). It logs `$msec <X-Service-Event-Id>` per
// request; an event's id is a UUIDv7, so its first 48 bits are when it was made.
// BENCH_RECEIVER=node forces the Node receiver, which reads each body's created_at.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeCertificate } from '../test/peers/certificates.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { freePort, tempDir } from './lib.ts';

export interface Receiver {
  kind: 'nginx' | 'node';
  ca: string;
  port: number;
  /** Times each event id was received (read up to now). */
  seen: Map<string, number>;
  /** Event to receipt, in ms, per request. */
  latencies: number[];
  /** Brings `seen` and `latencies` up to date (nginx writes its log at most 100 ms late). */
  poll(): void;
  /** Requests to leave out of `latencies` from now on (the floor's). */
  mute(on: boolean): void;
  close(): Promise<void>;
}

const NGINX = '/usr/sbin/nginx';

/** The receiver: a certificate for 127.0.0.1 signed by a CA of this run. */
export async function startReceiver(): Promise<Receiver> {
  const tls = await makeCertificate({ ips: ['127.0.0.1'] });
  const useNginx = process.env.BENCH_RECEIVER !== 'node' && existsSync(NGINX);
  return useNginx ? startNginx(tls) : startNode(tls);
}

function startNode(tls: { ca: string; key: string; cert: string }): Promise<Receiver> {
  const seen = new Map<string, number>();
  const latencies: number[] = [];
  let muted = false;
  const server = createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; created_at: string };
      seen.set(body.id, (seen.get(body.id) ?? 0) + 1);
      if (!muted) latencies.push(now - Date.parse(body.created_at));
      res.writeHead(204).end();
    });
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({
        kind: 'node',
        ca: tls.ca,
        port: (server.address() as AddressInfo).port,
        seen,
        latencies,
        poll: () => {},
        mute: (on) => (muted = on),
        close: () => {
          server.closeAllConnections();
          return new Promise<void>((closed) => server.close(() => closed()));
        },
      }),
    ),
  );
}

async function startNginx(tls: { ca: string; key: string; cert: string }): Promise<Receiver> {
  const dir = tempDir('nginx');
  mkdirSync(join(dir, 'body'));
  writeFileSync(join(dir, 'key.pem'), tls.key);
  writeFileSync(join(dir, 'cert.pem'), tls.cert);
  const port = await freePort();
  const log = join(dir, 'hooks.log');
  writeFileSync(log, '');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  log_format hooks '$msec $http_x_service_event_id';
  client_body_temp_path ${dir}/body;
  keepalive_timeout 60s;
  keepalive_requests 10000000;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${dir}/cert.pem;
    ssl_certificate_key ${dir}/key.pem;
    location / {
      access_log ${log} hooks buffer=256k flush=100ms;
      return 204;
    }
  }
}
`,
  );
  execFileSync(NGINX, ['-t', '-q', '-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'inherit' });
  const child = spawn(NGINX, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'inherit' });
  for (let i = 0; i < 100 && !existsSync(join(dir, 'nginx.pid')); i++) await new Promise((r) => setTimeout(r, 20));
  const seen = new Map<string, number>();
  const latencies: number[] = [];
  let muted = false;
  let offset = 0;
  const poll = () => {
    const text = readFileSync(log, 'latin1');
    const end = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(offset, end).split('\n')) {
      if (!line) continue;
      const [msec, id] = line.split(' ') as [string, string];
      seen.set(id, (seen.get(id) ?? 0) + 1);
      // X-Service-Event-Id is the event's UUIDv7: its first 12 hex digits are the milliseconds it was made at.
      if (!muted && id.startsWith('0'))
        latencies.push(Number(msec) * 1000 - parseInt(id.slice(0, 8) + id.slice(9, 13), 16));
    }
    offset = end;
  };
  return {
    kind: 'nginx',
    ca: tls.ca,
    port,
    seen,
    latencies,
    poll,
    mute: (on) => {
      poll();
      muted = on;
    },
    close: () => {
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** svc children started from now on trust the receiver's CA and may post to 127.0.0.1; returns the CA file. */
export function trustReceiver(receiver: Receiver): string {
  const caFile = join(tempDir('webhooks-ca'), 'ca.pem');
  writeFileSync(caFile, receiver.ca);
  process.env.NODE_EXTRA_CA_CERTS = caFile;
  process.env.SVC_ALLOW_INSECURE_WEBHOOKS = '1';
  return caFile;
}

/** A webhook on every `simulated` event (or the events BENCH_EVENTS lists), written through the use case on a running server's data dir. */
export async function subscribe(
  dataDir: string,
  port: number,
  events = (process.env.BENCH_EVENTS ?? 'simulated').split(','),
): Promise<void> {
  const admin = await createApp(loadConfig({ flags: { dataDir, allowInsecureWebhooks: true } }));
  const project = await admin.accounts.getProject('Default');
  await admin.webhooks.create(project.id, { url: `https://127.0.0.1:${port}/hooks`, events });
  await admin.close();
}
