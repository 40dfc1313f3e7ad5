// The load generator of bench:relay: smtp-source's job (N sessions, each on one
// connection, sending M messages in turn with MAIL, RCPT and DATA pipelined), plus
// AUTH PLAIN, which smtp-source cannot do. It drives svc and Postfix alike, so the
// client's cost is the same on both sides. Prints one JSON line with the results.
//
//   node bench/smtp-load.ts PORT SESSIONS MESSAGES FILE [KEY]

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

const [port, sessions, messages, file, key] = process.argv.slice(2);
if (!port || !sessions || !messages || !file) {
  process.stderr.write('usage: smtp-load.ts PORT SESSIONS MESSAGES FILE [KEY]\n');
  process.exit(2);
}

// The message as it goes on the wire: CRLF line ends, dot-stuffed, then the final dot.
const body = Buffer.from(
  `${readFileSync(file, 'utf8')
    .replace(/\r?\n/g, '\r\n')
    .replace(/^\./gm, '..')
    .replace(/(\r\n)?$/, '\r\n')}.\r\n`,
);

interface Session {
  socket: Socket;
  /** Resolves with the next reply's code (a multi-line reply counts once). */
  next(): Promise<number>;
}

function open(): Promise<Session> {
  const socket = connect({ host: '127.0.0.1', port: Number(port) });
  socket.setNoDelay(true);
  let buffer = '';
  const codes: number[] = [];
  const waiting: ((code: number) => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    let i: number;
    while ((i = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      if (line[3] === '-') continue;
      const code = Number(line.slice(0, 3));
      const w = waiting.shift();
      if (w) w(code);
      else codes.push(code);
    }
  });
  const closed = new Promise<never>((_, reject) =>
    socket.once('close', () => reject(new Error('the server closed the connection'))),
  );
  closed.catch(() => {});
  const next = () =>
    Promise.race([
      new Promise<number>((resolve) => {
        const c = codes.shift();
        if (c !== undefined) resolve(c);
        else waiting.push(resolve);
      }),
      closed,
    ]);
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, next }));
    socket.once('error', reject);
  });
}

const latencies: number[] = [];
let ok = 0;
let refused = 0;

async function run(share: number): Promise<void> {
  const s = await open();
  if ((await s.next()) !== 220) throw new Error('no greeting');
  s.socket.write('EHLO client.bench.test\r\n');
  if ((await s.next()) !== 250) throw new Error('EHLO refused');
  if (key) {
    s.socket.write(`AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}\r\n`);
    if ((await s.next()) !== 235) throw new Error('AUTH refused');
  }
  for (let i = 0; i < share; i++) {
    const start = performance.now();
    s.socket.write('MAIL FROM:<news@example.com>\r\nRCPT TO:<user@dest.test>\r\nDATA\r\n');
    const [mail, rcpt, data] = [await s.next(), await s.next(), await s.next()];
    if (mail !== 250 || rcpt !== 250 || data !== 354) {
      refused++;
      if (data === 354) s.socket.write('.\r\n');
      if (data === 354) await s.next();
      s.socket.write('RSET\r\n');
      await s.next();
      continue;
    }
    s.socket.write(body);
    if ((await s.next()) === 250) ok++;
    else refused++;
    latencies.push(performance.now() - start);
  }
  s.socket.write('QUIT\r\n');
  await s.next().catch(() => 0);
  s.socket.destroy();
}

const n = Number(sessions);
const total = Number(messages);
const started = performance.now();
await Promise.all(Array.from({ length: n }, (_, i) => run(Math.floor(total / n) + (i < total % n ? 1 : 0))));
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
process.stdout.write(
  `${JSON.stringify({ ok, refused, seconds, perSecond: ok / seconds, p50: at(0.5), p99: at(0.99), bytes: body.length })}\n`,
);
