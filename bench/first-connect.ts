// bench:first-connect — how long a LIVE email waits between its 202 and svc's first
// contact with the destination's MX. `svc serve` runs as a child process on a prepared
// data dir (verified signing domain, LIVE key); an smtp-server peer on loopback is the
// MX of dest.test and records when each transaction's MAIL FROM arrives (a new
// connection, or a pooled session's next transaction), and when each connection opens.
// Emails are sent one at a time, each after the previous one reached the peer, with a
// random pause between them so that the sends fall anywhere in the delivery timer's period.
//
//   npm run bench:first-connect               # 60 emails
//   BENCH_EMAILS=200 npm run bench:first-connect
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { listenOn } from '../src/smtp/server-kit.ts';
import { env, fmt, machine, percentile } from './lib.ts';
import { ownTempDir } from './deliver-peers.ts';
import { DEST_DOMAIN, prepareDataDir, startBenchDns, startSvc, SENDER_DOMAIN } from './deliver-svc.ts';

const EMAILS = env.num('BENCH_EMAILS', 60);
/** The pause between one email's arrival and the next send: uniform in [0, MAX_PAUSE_MS). */
const MAX_PAUSE_MS = env.num('BENCH_MAX_PAUSE_MS', 300);
/** An email that has not reached the peer by then counts as lost and ends the run. */
const ARRIVAL_TIMEOUT_MS = 10_000;

interface Peer {
  port: number;
  /** Resolves with the time (performance.now) of the next MAIL FROM. */
  nextMailFrom(): Promise<number>;
  connections: number;
  close(): Promise<void>;
}

async function startPeer(): Promise<Peer> {
  let waiting: ((at: number) => void) | undefined;
  const early: number[] = [];
  const peer: Peer = {
    port: 0,
    connections: 0,
    nextMailFrom: () => {
      const at = early.shift();
      return at === undefined ? new Promise((resolve) => (waiting = resolve)) : Promise.resolve(at);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session, cb) {
      peer.connections++;
      cb();
    },
    onMailFrom(_address, _session, cb) {
      const at = performance.now();
      if (waiting) {
        waiting(at);
        waiting = undefined;
      } else early.push(at);
      cb();
    },
    onData(stream, _session, cb) {
      stream.resume();
      stream.on('end', () => cb());
    },
  });
  peer.port = await listenOn(server, '127.0.0.1', 0);
  return peer;
}

async function main(): Promise<void> {
  const dir = ownTempDir('first-connect');
  const dataDir = join(dir, 'data');
  const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dns = await startBenchDns(dkim.publicKey);
  const key = await prepareDataDir(dataDir, dkim);
  const peer = await startPeer();
  const svc = await startSvc({ dataDir, dnsServer: dns.server, mxPort: peer.port, nodeArgs: [], extraArgs: [] });
  const fromAccepted: number[] = [];
  const fromRequest: number[] = [];
  try {
    for (let i = 0; i < EMAILS; i++) {
      await new Promise((r) => setTimeout(r, Math.random() * MAX_PAUSE_MS));
      const arrival = peer.nextMailFrom();
      const sent = performance.now();
      const res = await fetch(`${svc.url}/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          from: `n@${SENDER_DOMAIN}`,
          to: [`r${i}@${DEST_DOMAIN}`],
          subject: `m${i}`,
          text: 'hi',
        }),
      });
      const accepted = performance.now();
      if (res.status !== 202) throw new Error(`email ${i}: ${res.status} ${await res.text()}`);
      const at = await Promise.race([
        arrival,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`email ${i} did not reach the peer`)), ARRIVAL_TIMEOUT_MS).unref(),
        ),
      ]);
      fromAccepted.push(at - accepted);
      fromRequest.push(at - sent);
    }
  } finally {
    await svc.stop();
    await peer.close();
    await dns.close();
  }
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(26)} p50 ${fmt(percentile(xs, 50), 1)} ms   p90 ${fmt(percentile(xs, 90), 1)} ms   max ${fmt(Math.max(...xs), 1)} ms`;
  console.log(`bench:first-connect — ${EMAILS} LIVE emails, one at a time (${machine()})`);
  console.log(row('202 → MX MAIL FROM', fromAccepted));
  console.log(row('request → MX MAIL FROM', fromRequest));
  console.log(`connections opened at the MX: ${peer.connections}`);
}

await main();
