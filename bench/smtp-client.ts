// npm run bench:smtp-client — the CPU one SMTP transaction costs svc's delivery worker in its SMTP
// client (a session from src/delivery/smtp-pool.ts, each transaction through transmit.ts's `send`:
// nodemailer's SMTPConnection), against a floor: a client that only writes the pipelined envelope
// (MAIL, RCPT and DATA in one write, RFC 2920), then the message already dot-stuffed with its
// final "." in a second write, and reads the replies. Both send bench:deliver's message (the same
// ~5 KB, DKIM-signed) with one recipient per transaction, as svc does, to Postfix's smtp-sink on
// loopback, over BENCH_SESSIONS sessions at once in this one thread; the CPU counted is this
// thread's (the sink is another process). The rounds alternate the two clients.
//
// What it sizes: svc sends an email of three recipients as three transactions (each its own
// return path, docs/decisions.md), so a transaction's cost in the client is paid three times an
// email (docs/performance.md, issue 36, tenth session).
//
// Settings (env): BENCH_TRANSACTIONS (6000 a round and client), BENCH_SESSIONS (16), BENCH_ROUNDS (3).
import { generateKeyPairSync } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { createSmtpPool, type ConnectTarget } from '../src/delivery/smtp-pool.ts';
import { send } from '../src/delivery/transmit.ts';
import { env, fmt, machine, median } from './lib.ts';
import { missingTools, ownTempDir, startSink } from './deliver-peers.ts';
import { wireMessage } from './deliver-svc.ts';

const TRANSACTIONS = env.num('BENCH_TRANSACTIONS', 6000);
const SESSIONS = env.num('BENCH_SESSIONS', 16);
const ROUNDS = env.num('BENCH_ROUNDS', 3);

type Client = (port: number, message: Buffer, count: number, tag: string) => Promise<void>;

/** svc's client: a session from svc's pool, and transmit.ts's `send` for each transaction. */
const nodemailerClient: Client = async (port, message, count, tag) => {
  const pool = createSmtpPool({
    hostname: 'bench.svc.test',
    tlsInsecure: false,
    connectTimeoutMs: 10_000,
    socketTimeoutMs: 60_000,
    idleMs: 1_000,
  });
  const target: ConnectTarget = {
    host: 'mx.dest.test',
    ip: '127.0.0.1',
    port,
    secure: false,
    auth: null,
    tls: 'opportunistic',
  };
  const session = await pool.acquire(target);
  for (let i = 0; i < count; i++) {
    const envelope = { from: `bounces+${tag}-${i}@bounces.sender.test`, to: [`r${i % 3}@dest.test`], raw: message };
    await send(session, envelope, { eightBit: false, utf8: false });
  }
  session.conn.quit();
};

/** RFC 5321 4.5.2: a line's leading dot doubled; the message ends with CRLF "." CRLF. */
const dotStuffed = (message: Buffer) =>
  Buffer.from(message.toString('latin1').replace(/^\./gm, '..') + '.\r\n', 'latin1');

/**
 * Reply lines (the last line of each reply) off a socket, in order. Not test/peers/smtp-talk.ts:
 * that tool decodes UTF-8, matches each line with a regular expression and joins multi-line
 * replies, ~30 µs a transaction here, which a floor must not carry.
 */
function replies(socket: Socket): () => Promise<string> {
  let buffered = '';
  const ready: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  socket.on('data', (d: Buffer) => {
    buffered += d.toString('latin1');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end).trimEnd();
      buffered = buffered.slice(end + 1);
      if (line[3] === '-') continue;
      const w = waiting.shift();
      if (w) w(line);
      else ready.push(line);
    }
  });
  return () => {
    const line = ready.shift();
    return line === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(line);
  };
}

/** The floor: two writes and three reply reads a transaction, nothing else. */
const floorClient: Client = async (port, message, count, tag) => {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const next = replies(socket);
  const expect = async (code: string) => {
    const line = await next();
    if (!line.startsWith(code)) throw new Error(`expected ${code}, got ${line}`);
  };
  const data = dotStuffed(message);
  await expect('220');
  socket.write('EHLO bench.svc.test\r\n');
  await expect('250');
  for (let i = 0; i < count; i++) {
    const to = `r${i % 3}@dest.test`;
    socket.write(
      `MAIL FROM:<bounces+${tag}-${i}@bounces.sender.test>\r\nRCPT TO:<${to}> ORCPT=rfc822;${to}\r\nDATA\r\n`,
    );
    await expect('250');
    await expect('250');
    await expect('354');
    socket.write(data);
    await expect('250');
  }
  socket.end('QUIT\r\n');
};

const threadCpuUs = () => {
  const u = process.threadCpuUsage();
  return u.user + u.system;
};

async function round(client: Client, port: number, message: Buffer, tag: string) {
  const each = Math.ceil(TRANSACTIONS / SESSIONS);
  const cpu0 = threadCpuUs();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: SESSIONS }, (_, s) => client(port, message, each, `${tag}${s}`)));
  const n = each * SESSIONS;
  return { cpuUs: (threadCpuUs() - cpu0) / n, perSecond: n / ((performance.now() - t0) / 1000) };
}

const missing = missingTools();
if (missing) {
  console.error(missing);
  process.exit(1);
}
console.log(`bench:smtp-client — ${machine()}`);
const sink = await startSink(ownTempDir('smtp-client'));
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const message = await wireMessage(0, privateKey);
console.log(
  `${TRANSACTIONS} transactions a round and client, ${SESSIONS} sessions, one recipient each, ` +
    `${message.length} B message, to smtp-sink on 127.0.0.1:${sink.port}`,
);
const clients = { nodemailer: nodemailerClient, floor: floorClient };
await round(nodemailerClient, sink.port, message, 'w');
await round(floorClient, sink.port, message, 'w');
const cpu: Record<keyof typeof clients, number[]> = { nodemailer: [], floor: [] };
for (let r = 1; r <= ROUNDS; r++) {
  for (const [name, client] of Object.entries(clients) as [keyof typeof clients, Client][]) {
    const m = await round(client, sink.port, message, `${name[0]}${r}-`);
    cpu[name].push(m.cpuUs);
    console.log(
      `  round ${r} ${name.padEnd(10)} ${fmt(m.perSecond).padStart(6)} transactions/s  cpu ${fmt(m.cpuUs, 1)} µs a transaction`,
    );
  }
}
await sink.stop();
const svc = median(cpu.nodemailer);
const floor = median(cpu.floor);
console.log(
  `\nmedian: nodemailer ${fmt(svc, 1)} µs, floor ${fmt(floor, 1)} µs a transaction: ${fmt(svc / floor, 2)}× the floor; ` +
    `${fmt((3 * (svc - floor)) / 1000, 2)} ms above it for an email of 3 recipients (3 transactions)`,
);
