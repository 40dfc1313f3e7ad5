// npm run bench:top — what the live `svc top` costs while svc takes 1,000 LIVE emails/s.
//
// svc serve (its own child process) takes BENCH_RATE LIVE emails per second (open loop,
// bench:deliver's ~5 KB email with BENCH_RCPTS recipients, DKIM-signed) and delivers them
// to Postfix's smtp-sink through a loopback DNS server. `svc top` runs its live Ink view in
// a pseudo-terminal of 80×24 (util-linux `script`), refreshing every second: first on the
// data dir (read-only), then with --server and a READ_ONLY key. After BENCH_WARMUP_S, the
// CPU of the svc top process is read from /proc over BENCH_SECONDS, as a share of one core
// (target: under 5 %), beside the server's CPU and the rates it kept.
//
// Settings (env): BENCH_RATE (1000), BENCH_RCPTS (1), BENCH_SECONDS (30), BENCH_WARMUP_S (10),
// BENCH_DIST=1 (svc from a bundle), BENCH_KEEP=1 keeps the temp dirs.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpuMs, env, fmt, machine } from './lib.ts';
import { missingTools, track } from './deliver-peers.ts';
import { startLiveSvc, startPoster } from './live-load.ts';

const RATE = env.num('BENCH_RATE', 1000);
const RCPTS = env.num('BENCH_RCPTS', 1);
const SECONDS = env.num('BENCH_SECONDS', 30);
const WARMUP_S = env.num('BENCH_WARMUP_S', 10);
const TARGET_PCT = 5;
/** `svc top` from source, as `npm run svc -- top` runs it. */
const SVC_ENTRY = new URL('../bin/svc.ts', import.meta.url).pathname;
const SCRIPT = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));

const missing = missingTools() ?? (SCRIPT ? null : 'util-linux script is needed (apt-get install bsdutils)');
if (missing) {
  console.error(missing);
  process.exit(1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** svc top in an 80×24 pseudo-terminal; resolves to the pid of its node process. */
async function startTop(
  args: string[],
  extraEnv: Record<string, string>,
): Promise<{ child: ChildProcess; pid: number; frames: () => number }> {
  const command = `stty cols 80 rows 24; exec ${process.execPath} ${SVC_ENTRY} top ${args.join(' ')}`;
  const child = track(
    spawn(SCRIPT!, ['-qfec', command, '/dev/null'], { env: { ...process.env, TERM: 'xterm-256color', ...extraEnv } }),
  );
  // Frames drawn: each starts with the header (a chunk may cut one in two; the count is a floor).
  let frames = 0;
  child.stdout!.on('data', (c: Buffer) => (frames += c.toString().split('svc top — ').length - 1));
  // `exec` makes the shell script starts become node: its pid is the script's only child.
  for (let i = 0; i < 100; i++) {
    const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    if (kids.length && /node/.test(readFileSync(`/proc/${kids[0]}/cmdline`, 'utf8'))) {
      return { child, pid: Number(kids[0]), frames: () => frames };
    }
    await sleep(50);
  }
  throw new Error('svc top did not start');
}

const live = await startLiveSvc('top', []);
console.log(`bench:top — ${machine()}, ${new Date().toISOString()}`);
console.log(
  `${RATE} LIVE emails/s (${RCPTS} recipient${RCPTS === 1 ? '' : 's'}, ~5 KB, DKIM-signed), open loop, delivered to smtp-sink; ` +
    `svc top in an 80×24 pseudo-terminal, ${WARMUP_S} s of warmup, then ${SECONDS} s measured`,
);
const poster = startPoster(live, RATE, RCPTS);
let exitCode = 0;
try {
  const readOnly = await (async () => {
    const { createApp } = await import('../src/app.ts');
    const { loadConfig } = await import('../src/config/load.ts');
    // The server holds the database; a second writer (this process) only adds a key through the same file.
    const app = await createApp(loadConfig({ env: {}, flags: { dataDir: live.dataDir } }));
    try {
      const project = (app.db.prepare('SELECT id FROM projects LIMIT 1').get() as { id: string }).id;
      return (await app.keys.createKey(project, { name: 'top', env: 'LIVE', permissions: 'READ_ONLY' })).key!;
    } finally {
      await app.close();
    }
  })();
  const modes: [string, string[], Record<string, string>][] = [
    ['data dir', [], { SVC_DATA_DIR: live.dataDir }],
    ['--server', ['--server', live.svc.url], { SVC_API_KEY: readOnly }],
  ];
  let pass = true;
  for (const [label, args, extraEnv] of modes) {
    const top = await startTop(args, extraEnv);
    await sleep(WARMUP_S * 1000);
    const a0 = poster.state.accepted;
    const d0 = live.sink.count();
    const top0 = cpuMs(top.pid);
    const svc0 = cpuMs(live.svc.pid);
    const t0 = performance.now();
    await sleep(SECONDS * 1000);
    const ms = performance.now() - t0;
    const topPct = (100 * (cpuMs(top.pid) - top0)) / ms;
    const svcPct = (100 * (cpuMs(live.svc.pid) - svc0)) / ms;
    const accepted = ((poster.state.accepted - a0) * 1000) / ms;
    const delivered = ((live.sink.count() - d0) * 1000) / ms / RCPTS;
    const frames = top.frames();
    top.child.stdin!.write('q');
    const code = await new Promise<number | null>((resolve) => top.child.once('exit', resolve));
    const ok = topPct < TARGET_PCT && code === 0 && frames > SECONDS / 2;
    pass &&= ok;
    console.log(
      `  svc top (${label}): ${fmt(topPct, 1)} % of a core; svc serve ${fmt(svcPct)} %; ` +
        `${fmt(accepted)} emails/s accepted, ${fmt(delivered)} delivered; ${frames} frames drawn; exit ${code}`,
    );
  }
  console.log(`${pass ? 'PASS' : 'MISS'} svc top under ${TARGET_PCT} % of one core at ${RATE} emails/s`);
  if (poster.state.failed) {
    exitCode = 1;
    for (const p of poster.state.problems) console.log(`  problem: ${p}`);
  }
} finally {
  await poster.stop();
  await live.stop();
}
process.exit(exitCode);
