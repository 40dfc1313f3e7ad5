// The load generator of bench:relay: smtp-source's job (N sessions, each on one
// connection, sending M messages in turn, the next one after the 250), plus AUTH
// PLAIN, which smtp-source cannot do. It drives svc and Postfix alike, so the
// client's cost is the same on both sides. Prints one JSON line with the results.
//
//   node bench/smtp-load.ts PORT SESSIONS MESSAGES FILE [KEY]
//        [--from ADDR] [--to ADDR,ADDR,...] [--no-pipelining]
//
// --from is MAIL FROM (news@example.com), --to the RCPT TO of every message
// (user@dest.test). MAIL, every RCPT and DATA go in one write, as smtp-source does,
// unless --no-pipelining: then each command waits for its reply.

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    from: { type: 'string', default: 'news@example.com' },
    to: { type: 'string', default: 'user@dest.test' },
    'no-pipelining': { type: 'boolean', default: false },
  },
});
const [port, sessions, messages, file, key] = positionals;
if (!port || !sessions || !messages || !file) {
  process.stderr.write(
    'usage: smtp-load.ts PORT SESSIONS MESSAGES FILE [KEY] [--from ADDR] [--to ADDR,...] [--no-pipelining]\n',
  );
  process.exit(2);
}
const recipients = opts.to.split(',').filter(Boolean);
const pipelining = !opts['no-pipelining'];

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

const commands = [`MAIL FROM:<${opts.from}>\r\n`, ...recipients.map((r) => `RCPT TO:<${r}>\r\n`), 'DATA\r\n'];

/** MAIL, RCPT and DATA, in one write or one at a time; the reply code of each. */
async function envelope(s: Session): Promise<{ mail: number; rcpts: number[]; data: number }> {
  const codes: number[] = [];
  if (pipelining) {
    s.socket.write(commands.join(''));
    for (let i = 0; i < commands.length; i++) codes.push(await s.next());
  } else {
    for (const c of commands) {
      s.socket.write(c);
      codes.push(await s.next());
    }
  }
  return { mail: codes[0]!, rcpts: codes.slice(1, -1), data: codes.at(-1)! };
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
    const { mail, rcpts, data } = await envelope(s);
    if (mail !== 250 || rcpts.some((c) => c !== 250) || data !== 354) {
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
