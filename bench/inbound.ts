// npm run bench:inbound — receiving mail (issue 34): svc's inbound MX posting each message to a
// webhook, against Postfix piping each message to the same receiver.
//
// One ~5 KB multipart reply (text + HTML + a small PNG) from alice@customer.test to
// support@sender.test is sent BENCH_MESSAGES times over BENCH_SESSIONS sessions by
// bench/smtp-load.ts (bench:relay's client, MAIL/RCPT/DATA pipelined), after BENCH_WARMUP
// messages that are let drain first. customer.test has no records in the bench DNS: mailauth's
// SPF, DKIM, DMARC and ARC lookups for it come back NXDOMAIN from loopback at once.
// - svc: bench:deliver's data dir (sender.test bound to the project), set up with the admin CLI:
//   `domains update sender.test --receiving on`, a webhook to the receiver (events delivered),
//   `routes add --pattern support@sender.test --webhook <id>`; then `svc serve --inbound-port
//   <free> --allow-insecure-webhooks` with the loopback DNS. 250 after DATA once the message,
//   its received_emails row and its email.received outbox row are committed; the webhook
//   dispatcher then POSTs the event.
// - Postfix: bench:deliver's throwaway instance, plus relay_domains/relay_recipient_maps that
//   take support@sender.test only and a transport map to a `pipe` service running
//   `curl --data-binary @- http://127.0.0.1:<receiver>/hook` per message (so Postfix also hands
//   each message to an HTTP receiver, as svc does; /bin/cat > /dev/null would leave that out).
//   smtpd and cleanup fsync the queue file before the 250. BENCH_PIPE=devnull pipes to
//   `dd of=/dev/null` instead (cat > /dev/null without a shell), BENCH_PIPE=discard uses Postfix's
//   discard transport (no process per message): both then count Postfix's status=sent log lines
//   in place of POSTs. On this VM a fork+exec costs ~10 ms of CPU and a curl ~38 ms.
// The receiver is a node:http server in this process (both sides pay it the same): it counts
// svc's POSTs whose JSON says type email.received (by event id, so a repeat shows) and
// Postfix's raw-message POSTs.
// Per run: ingest msgs/s (first MAIL to last 250, smtp-load's clock), end-to-end msgs/s
// (messages / (ingest time + time from the last 250 until the last POST)), p50/p99 of MAIL to
// 250, CPU per message of the server until the last 250 and until the last POST (svc: its
// process; Postfix: master and children, reaped ones included, curl too). Checks: every 250 has
// its POST, svc's received_emails holds every message, Postfix's log has a status=sent for each
// and its queue is empty. Rounds alternate svc, Postfix on fresh instances.
//
// Every message here comes from 127.0.0.1 and one sender, so the svc child is started with
// the receiving rates (120 messages a minute per client IP, 60 per envelope sender, by default)
// raised to a million: --inbound-rate-per-ip and --inbound-rate-per-sender.
//
// Settings (env): BENCH_MESSAGES (10000), BENCH_SESSIONS (20), BENCH_WARMUP (500),
// BENCH_ROUNDS (2), BENCH_PIPE=curl|devnull|discard (curl), BENCH_ONLY=svc|postfix, BENCH_DIST=1 (svc and its CLI from the bundle),
// BENCH_NODE_ARGS (extra node flags for svc), BENCH_KEEP=1.
import { generateKeyPairSync } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { countRows, env, fmt, freePort, machine, median, reportResult, ROOT, tempDir, verdict } from './lib.ts';
import {
  machineTicks,
  missingTools,
  ownTempDir,
  procCpuMs,
  removeDir,
  startPostfix,
  treeCpuMs,
  track,
} from './deliver-peers.ts';
import { buildDist, prepareDataDir, SENDER_DOMAIN, startBenchDns, startSvc } from './deliver-svc.ts';

const MESSAGES = env.num('BENCH_MESSAGES', 10_000);
const SESSIONS = env.num('BENCH_SESSIONS', 20);
const WARMUP = env.num('BENCH_WARMUP', 500);
const ROUNDS = env.num('BENCH_ROUNDS', 2);
const ONLY = process.env.BENCH_ONLY as 'svc' | 'postfix' | undefined;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** A run fails when the receiver's count does not move for this long. */
const STALL_MS = 60_000;
const DOMAIN = SENDER_DOMAIN;
const RCPT = `support@${DOMAIN}`;
/** A customer's address at a domain the bench DNS has no records of (NXDOMAIN for every lookup). */
const FROM = 'alice@customer.test';
/** What Postfix's transport for support@ does: pipe to curl (POST to the receiver), pipe to dd of=/dev/null, or discard. */
const PIPE = process.env.BENCH_PIPE ?? 'curl';
if (PIPE !== 'curl' && PIPE !== 'devnull' && PIPE !== 'discard')
  throw new Error(`BENCH_PIPE must be curl, devnull or discard, got ${PIPE}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// The message: a customer's reply to an order email, text + HTML + a small PNG.

function replyMessage(): string {
  // A 64x64 PNG-sized attachment (~1.2 KB of base64): a real PNG header and filler, as a screenshot thumbnail would be.
  const png = Buffer.concat([
    Buffer.from('89504e470d0a1a0a0000000d4948445200000040000000400806000000aa6971de', 'hex'),
    Buffer.from(Array.from({ length: 860 }, (_, i) => (i * 37 + 11) & 0xff)),
  ]);
  const b64 = png.toString('base64').replace(/.{76}/g, '$&\n').trim();
  const quoted = Array.from(
    { length: 9 },
    (_, i) => `>   ${i + 1} x Trail running shoes, size ${38 + i}, slate grey`,
  ).join('\n');
  const text =
    `Hi,\n\nThe parcel for order #100000 arrived today, but the shoes in size 41 are the wrong colour\n` +
    `(blue instead of slate grey, photo attached). Can you send the right pair, or tell me how to\n` +
    `return these? I would rather keep the order than cancel it.\n\nThanks,\nAlice\n\n` +
    `On Fri, 27 Nov 2026 at 09:12, Acme Shop <notifications@${DOMAIN}> wrote:\n` +
    `> Hi Alice,\n>\n> Good news: your order #100000 is on its way. It left our warehouse this morning\n` +
    `> and should arrive within 2-3 business days.\n>\n${quoted}\n>\n` +
    `> Shipping address: Alice Example, 12 Harbour Street, Apartment 4B, 1011 AB Amsterdam.\n` +
    `> Track it any time: https://shop.example.com/orders/track?o=100000\n`;
  const html =
    `<html><head><meta charset="utf-8"></head><body style="font-family:Arial,sans-serif">\n` +
    `<div>Hi,</div><div><br></div><div>The parcel for order #100000 arrived today, but the shoes in ` +
    `size 41 are the wrong colour (blue instead of slate grey, photo attached). Can you send the right ` +
    `pair, or tell me how to return these? I would rather keep the order than cancel it.</div>\n` +
    `<div><br></div><div>Thanks,</div><div>Alice</div><br>\n` +
    `<div class="gmail_quote"><div>On Fri, 27 Nov 2026 at 09:12, Acme Shop &lt;notifications@${DOMAIN}&gt; wrote:</div>\n` +
    `<blockquote style="margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex">\n` +
    `<p>Hi Alice,</p><p>Good news: your order <b>#100000</b> is on its way.</p>\n<table>\n` +
    Array.from(
      { length: 9 },
      (_, i) => `<tr><td>Item ${i + 1}: Trail running shoes, size ${38 + i}, slate grey</td></tr>`,
    ).join('\n') +
    `\n</table>\n<p>Track it any time: <a href="https://shop.example.com/orders/track?o=100000">shop.example.com</a></p>\n` +
    `</blockquote></div></body></html>\n`;
  const headers = [
    'Return-Path: <alice@customer.test>',
    'Received: from mail.customer.test (mail.customer.test [192.0.2.25])\n\tby mx.customer.test with ESMTPS id 4Qx7Lm2b9Kz1; Sat, 28 Nov 2026 10:02:11 +0000',
    'MIME-Version: 1.0',
    'Date: Sat, 28 Nov 2026 11:02:09 +0100',
    'Message-ID: <CAF7x2b9K+reply.100000@mail.customer.test>',
    `In-Reply-To: <order-100000@${DOMAIN}>`,
    `References: <order-100000@${DOMAIN}>`,
    'From: Alice Example <alice@customer.test>',
    `To: Acme Support <${RCPT}>`,
    'Subject: Re: Your order #100000 has shipped',
    'Content-Type: multipart/mixed; boundary="000000000000mixed01"',
  ];
  return (
    `${headers.join('\n')}\n\n--000000000000mixed01\n` +
    `Content-Type: multipart/alternative; boundary="000000000000alt01"\n\n` +
    `--000000000000alt01\nContent-Type: text/plain; charset="UTF-8"\n\n${text}\n` +
    `--000000000000alt01\nContent-Type: text/html; charset="UTF-8"\n\n${html}\n--000000000000alt01--\n\n` +
    `--000000000000mixed01\nContent-Type: image/png; name="shoes.png"\n` +
    `Content-Disposition: attachment; filename="shoes.png"\nContent-Transfer-Encoding: base64\n` +
    `Content-ID: <shoes_01>\n\n${b64}\n--000000000000mixed01--\n`
  );
}

// ---------------------------------------------------------------------------
// The webhook receiver: node:http on 127.0.0.1, 204 to every POST to /hook.

interface Receiver {
  port: number;
  /** svc's email.received events by id (count of POSTs of each); Postfix's raw-message POSTs. */
  events: Map<string, number>;
  raw: number;
  other: number;
  /** performance.now() of the last POST. */
  lastAt: number;
  posts(): number;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const r = {
    events: new Map<string, number>(),
    raw: 0,
    other: 0,
    lastAt: 0,
  };
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST' || req.url !== '/hook') r.other++;
      else if (body[0] === 0x7b) {
        const event = JSON.parse(body.toString('utf8')) as { id?: string; type?: string };
        if (event.type === 'email.received' && event.id) r.events.set(event.id, (r.events.get(event.id) ?? 0) + 1);
        else r.other++;
      } else if (body.includes('Subject: Re: Your order #100000')) r.raw++;
      else r.other++;
      r.lastAt = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return Object.assign(r, {
    port: (server.address() as AddressInfo).port,
    posts: () => r.events.size + r.raw,
    reset() {
      r.events.clear();
      r.raw = r.other = r.lastAt = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((closed) => server.close(() => closed()));
    },
  });
}

/** Waits until `count` reaches `want`; fails when it stops moving for STALL_MS. */
async function untilPosted(count: () => number, want: number, label: string): Promise<void> {
  let last = -1;
  let lastMove = performance.now();
  for (;;) {
    const got = count();
    if (got >= want) return;
    if (got !== last) [last, lastMove] = [got, performance.now()];
    if (performance.now() - lastMove > STALL_MS) throw new Error(`${label}: the receiver stalled at ${got}/${want}`);
    await sleep(5);
  }
}

// ---------------------------------------------------------------------------
// The load: bench/smtp-load.ts in its own process (bench:relay's client).

interface Load {
  ok: number;
  refused: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  bytes: number;
}

function load(port: number, messages: number, file: string): Promise<Load> {
  const args = ['--import', 'tsx', 'bench/smtp-load.ts', String(port), String(SESSIONS), String(messages), file];
  args.push('--from', FROM, '--to', RCPT);
  const child = track(spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Load) : reject(new Error(`smtp-load exited with ${code}`)),
    ),
  );
}

// ---------------------------------------------------------------------------
// The two servers.

interface Target {
  kind: 'svc' | 'postfix';
  port: number;
  cpu(): number;
  /** Messages handed on so far (POSTed to the receiver, or with devnull/discard Postfix's status=sent), and when the last one was. */
  handed(): number;
  handedAt(): number;
  /** Stops the server; how many of `answered` it stored (svc: received_emails; Postfix: sent by the pipe), and what is wrong. */
  finish(answered: number): Promise<{ stored: number; problems: string[] }>;
  stop(): Promise<void>;
}

interface Shared {
  rx: Receiver;
  dns: string;
  dkim: ReturnType<typeof generateKeyPairSync>;
  dist?: { main: string } | undefined;
}

/** The admin CLI on the data dir (bin/svc.ts under this node, or the bundle). */
function cli(shared: Shared, dataDir: string, args: string[]): string {
  const entry = shared.dist?.main ?? join(ROOT, 'bin/svc.ts');
  const r = spawnSync(process.execPath, [entry, ...args, '--data-dir', dataDir], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, SVC_ALLOW_INSECURE_WEBHOOKS: '1', SVC_DNS_SERVERS: shared.dns },
  });
  if (r.status !== 0) throw new Error(`svc ${args.join(' ')} exited with ${r.status}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

async function svcTarget(shared: Shared): Promise<Target> {
  const dir = ownTempDir('inbound-svc');
  const dataDir = join(dir, 'data');
  await prepareDataDir(dataDir, shared.dkim);
  cli(shared, dataDir, ['domains', 'update', DOMAIN, '--receiving', 'on']);
  const hook = JSON.parse(
    cli(shared, dataDir, [
      'webhooks',
      'create',
      '--project',
      'Bench',
      '--url',
      `http://127.0.0.1:${shared.rx.port}/hook`,
      '--events',
      'delivered',
      '--json',
    ]),
  ) as { id: string };
  cli(shared, dataDir, ['routes', 'add', '--project', 'Bench', '--pattern', RCPT, '--webhook', hook.id]);
  const port = await freePort();
  const svc = await startSvc({
    entry: shared.dist?.main,
    dataDir,
    dnsServer: shared.dns,
    mxPort: 9, // nothing is delivered
    nodeArgs: NODE_ARGS,
    extraArgs: [
      '--inbound-port',
      String(port),
      '--inbound-host',
      '127.0.0.1',
      '--allow-insecure-webhooks',
      '--inbound-rate-per-ip',
      '1000000',
      '--inbound-rate-per-sender',
      '1000000',
    ],
  });
  let stopped: Promise<number | null> | undefined;
  const stop = () => (stopped ??= svc.stop());
  return {
    kind: 'svc',
    port,
    cpu: () => procCpuMs(svc.pid),
    handed: () => shared.rx.posts(),
    handedAt: () => shared.rx.lastAt,
    async finish(answered) {
      const code = await stop();
      const problems = code === 0 ? [] : [`svc exited with ${code}`];
      const stored = countRows(dataDir, ['received_emails']).received_emails!;
      if (stored !== answered) problems.push(`${stored} received_emails rows for ${answered} 250s`);
      removeDir(dir);
      return { stored, problems };
    },
    stop: async () => {
      await stop();
      removeDir(dir);
    },
  };
}

async function postfixTarget(shared: Shared): Promise<Target> {
  // bench:deliver's instance (its relayhost, port 9, is never used: every message is for the pipe).
  const pf = await startPostfix(9);
  const etc = join(pf.dir, 'etc');
  appendFileSync(
    join(etc, 'main.cf'),
    `# bench:inbound: support@${DOMAIN} only, each message to the ${PIPE} transport, one recipient per delivery
relay_domains = ${DOMAIN}
relay_recipient_maps = inline:{ ${RCPT}=ok }
transport_maps = inline:{ ${DOMAIN}=${PIPE === 'discard' ? 'discard' : 'inbound'}: }
inbound_destination_recipient_limit = 1
`,
  );
  const argv =
    PIPE === 'curl'
      ? `/usr/bin/curl -s -f -o /dev/null -H Content-Type:message/rfc822 --data-binary @- http://127.0.0.1:${shared.rx.port}/hook`
      : '/bin/dd of=/dev/null bs=64k status=none'; // cat > /dev/null, without a shell
  appendFileSync(join(etc, 'master.cf'), `inbound   unix - n n - - pipe\n  user=nobody argv=${argv}\n`);
  const r = spawnSync('/usr/sbin/postfix', ['-c', etc, 'reload'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`postfix reload failed: ${r.stderr}`);
  await sleep(500); // the master re-reads master.cf on SIGHUP
  const master = pf.masterPid();
  const sent = sentCounter(join(pf.dir, 'maillog'));
  return {
    kind: 'postfix',
    port: pf.port,
    cpu: () => treeCpuMs(master),
    handed: PIPE === 'curl' ? () => shared.rx.posts() : sent.count,
    handedAt: PIPE === 'curl' ? () => shared.rx.lastAt : sent.at,
    async finish(answered) {
      const problems: string[] = [];
      let tally = pf.tally();
      for (let i = 0; i < 100 && (tally.sent < answered || tally.queued !== 0); i++) {
        await sleep(100);
        tally = pf.tally();
      }
      if (tally.sent !== answered) problems.push(`${tally.sent} status=sent for ${answered} 250s`);
      if (tally.queued !== 0) problems.push(`${tally.queued} messages left in the queue`);
      await pf.stop();
      return { stored: tally.sent, problems };
    },
    stop: () => pf.stop(),
  };
}

/** `status=sent` lines of a Postfix log, read on from where the last call stopped; and when the count last moved. */
function sentCounter(log: string): { count: () => number; at: () => number } {
  let offset = 0;
  let sent = 0;
  let at = 0;
  return {
    count() {
      let fd: number;
      try {
        fd = openSync(log, 'r');
      } catch {
        return sent;
      }
      try {
        const size = fstatSync(fd).size;
        if (size > offset) {
          const buf = Buffer.alloc(size - offset);
          readSync(fd, buf, 0, buf.length, offset);
          const end = buf.lastIndexOf(0x0a) + 1;
          const n = buf.toString('latin1', 0, end).split(' status=sent ').length - 1;
          offset += end;
          if (n) [sent, at] = [sent + n, performance.now()];
        }
      } finally {
        closeSync(fd);
      }
      return sent;
    },
    at: () => at,
  };
}

// ---------------------------------------------------------------------------
// A run.

interface Run {
  kind: Target['kind'];
  load: Load;
  cpuUsPerMsg: number;
  machineBusy: number;
  /** POSTs already at the receiver when the last 250 came; seconds from then until the last one. */
  postedInRun: number;
  drainSeconds: number;
  e2ePerSecond: number;
  cpuUsToPosted: number;
  /** This process (the receiver and the DNS server mailauth asks) until the last POST. */
  harnessUsPerMsg: number;
  answered: number;
  stored: number;
  posted: number;
  problems: string[];
}

async function measure(t: Target, rx: Receiver, file: string): Promise<Run> {
  rx.reset();
  const warm = await load(t.port, WARMUP, file);
  await untilPosted(() => t.handed(), warm.ok, `${t.kind} warmup`);
  const warmPosts = t.handed();
  const cpu0 = t.cpu();
  const own0 = process.cpuUsage();
  const m0 = machineTicks();
  const run = await load(t.port, MESSAGES, file);
  const ended = performance.now();
  const m1 = machineTicks();
  const cpuMs = t.cpu() - cpu0;
  const postedInRun = t.handed() - warmPosts;
  await untilPosted(() => t.handed(), warmPosts + run.ok, t.kind);
  const drainSeconds = Math.max(0, t.handedAt() - ended) / 1000;
  const cpuToPosted = t.cpu() - cpu0;
  const own = process.cpuUsage(own0);
  const answered = warm.ok + run.ok;
  const { stored, problems } = await t.finish(answered);
  await sleep(200); // a POST sent twice would be here by now
  const posted = t.handed();
  if (posted !== answered) problems.push(`${posted} messages posted for ${answered} 250s`);
  const repeats = [...rx.events.values()].reduce((a, n) => a + n - 1, 0);
  if (repeats) problems.push(`${repeats} events posted more than once`);
  if (rx.other) problems.push(`${rx.other} POSTs that are neither an email.received event nor the message`);
  if (t.kind === 'svc' && rx.raw) problems.push(`${rx.raw} raw POSTs during svc's run`);
  if (t.kind === 'postfix' && rx.events.size) problems.push(`${rx.events.size} events during Postfix's run`);
  const e2eSeconds = run.seconds + drainSeconds;
  return {
    kind: t.kind,
    load: run,
    cpuUsPerMsg: (cpuMs * 1000) / Math.max(1, run.ok),
    machineBusy: (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total),
    postedInRun,
    drainSeconds,
    e2ePerSecond: run.ok / e2eSeconds,
    cpuUsToPosted: (cpuToPosted * 1000) / Math.max(1, run.ok),
    harnessUsPerMsg: (own.user + own.system) / Math.max(1, run.ok),
    answered,
    stored,
    posted,
    problems,
  };
}

async function runOne(kind: Run['kind'], shared: Shared, file: string): Promise<Run> {
  const t = kind === 'svc' ? await svcTarget(shared) : await postfixTarget(shared);
  try {
    return await measure(t, shared.rx, file);
  } finally {
    await t.stop();
  }
}

function show(r: Run): void {
  const l = r.load;
  console.log(
    `  ${r.kind.padEnd(7)} ingest ${fmt(l.perSecond).padStart(5)} msgs/s  p50 ${fmt(l.p50, 1)} ms  p99 ${fmt(l.p99, 1)} ms  ` +
      `CPU ${fmt(r.cpuUsPerMsg)} µs/msg  machine ${fmt(r.machineBusy * 100)} % busy  refused ${l.refused}  ` +
      `stored ${r.stored}/${r.answered}  posted ${r.posted}/${r.answered}` +
      (r.problems.length ? `  PROBLEM: ${r.problems.join('; ')}` : ''),
  );
  console.log(
    `          end to end ${fmt(r.e2ePerSecond).padStart(5)} msgs/s  posted when the last 250 came: ` +
      `${fmt(r.postedInRun)}/${fmt(l.ok)}, the last ${fmt(r.drainSeconds, 2)} s later; CPU to posted ${fmt(r.cpuUsToPosted)} µs/msg; ` +
      `harness (receiver, DNS) ${fmt(r.harnessUsPerMsg)} µs/msg`,
  );
}

// ---------------------------------------------------------------------------

const missing = missingTools();
if (missing && ONLY !== 'svc') {
  console.error(missing);
  process.exit(2);
}
const dir = tempDir('inbound');
const wire = replyMessage();
const file = join(dir, 'reply.eml');
writeFileSync(file, wire);
const dkim = generateKeyPairSync('rsa', { modulusLength: 2048 });
const closers: (() => Promise<unknown>)[] = [];
const dist = env.flag('BENCH_DIST') && ONLY !== 'postfix' ? await buildDist() : undefined;
if (dist) closers.push(() => Promise.resolve(dist.remove()));
const dns = await startBenchDns(dkim.publicKey);
const rx = await startReceiver();
closers.push(
  () => rx.close(),
  () => dns.close(),
);
const shared: Shared = { rx, dns: dns.server, dkim, dist };
console.log(`bench:inbound  ${machine()}, ${new Date().toISOString()}`);
console.log(
  `  ${MESSAGES} messages of ${fmt(Buffer.byteLength(wire) / 1024, 1)} KB (text + HTML + PNG) from ${FROM} ` +
    `(no DNS records) to ${RCPT}, ${SESSIONS} sessions, pipelined, warmup ${WARMUP}, ${ROUNDS} round(s); ` +
    `svc posts email.received, Postfix ${PIPE === 'discard' ? 'discards' : `pipes to ${PIPE}`}, one receiver on 127.0.0.1`,
);

const runs: Run[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['svc', 'postfix'] as const) {
      if (ONLY && ONLY !== kind) continue;
      const r = await runOne(kind, shared, file);
      show(r);
      runs.push(r);
    }
  }
} finally {
  for (const close of closers) await close();
}

const med = (kind: Run['kind'], f: (r: Run) => number) => median(runs.filter((r) => r.kind === kind).map(f));
const allOk = runs.every(
  (r) => r.stored === r.answered && r.posted === r.answered && r.load.refused === 0 && r.problems.length === 0,
);
if (!ONLY) {
  const [svcIn, pfIn] = [med('svc', (r) => r.load.perSecond), med('postfix', (r) => r.load.perSecond)];
  const [svcE2e, pfE2e] = [med('svc', (r) => r.e2ePerSecond), med('postfix', (r) => r.e2ePerSecond)];
  const [svcCpu, pfCpu] = [med('svc', (r) => r.cpuUsPerMsg), med('postfix', (r) => r.cpuUsPerMsg)];
  const [svcAll, pfAll] = [med('svc', (r) => r.cpuUsToPosted), med('postfix', (r) => r.cpuUsToPosted)];
  console.log(
    `\n  median ingest: svc ${fmt(svcIn)} msgs/s, Postfix ${fmt(pfIn)} msgs/s: ${fmt(svcIn / pfIn, 2)}× (no target)`,
  );
  console.log(
    `  median end to end: svc ${fmt(svcE2e)} msgs/s, Postfix ${fmt(pfE2e)} msgs/s: ${fmt(svcE2e / pfE2e, 2)}× (no target)`,
  );
  console.log(
    `  CPU per message until the last 250: svc ${fmt(svcCpu)} µs, Postfix ${fmt(pfCpu)} µs (${fmt(svcCpu / pfCpu, 2)}×)`,
  );
  console.log(
    `  CPU per message until the last POST: svc ${fmt(svcAll)} µs, Postfix ${fmt(pfAll)} µs (${fmt(svcAll / pfAll, 2)}×)`,
  );
  reportResult({
    name: 'inbound',
    svc: svcE2e,
    peer: pfE2e,
    peerName: 'Postfix',
    unit: 'msgs/s',
    svcCpuUs: svcAll,
    peerCpuUs: pfAll,
    target: { ratio: 0 },
    ok: allOk,
  });
}
console.log(`  every 250 stored and posted once: ${verdict(allOk)}`);
process.exit(allOk ? 0 : 1);
