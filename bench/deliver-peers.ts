// The outside world of bench:deliver: Postfix's smtp-sink (the receiving MX),
// a throwaway Postfix instance entirely under a temp dir (the peer svc is
// compared with), smtp-source (Postfix's load generator) and CPU accounting of
// process trees. Every process started here is ended on exit, also on ^C; the
// system Postfix instance is never configured, started or touched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './lib.ts';

const KEEP = process.env.BENCH_KEEP === '1';
const TOOLS = ['/usr/sbin/postfix', '/usr/sbin/smtp-sink', '/usr/sbin/smtp-source', '/usr/sbin/postconf'];

/** Debian's OpenDKIM, the milter a self-hoster signs Postfix's mail with (issue 36). */
export const OPENDKIM = '/usr/sbin/opendkim';

/** The command that installs OpenDKIM, or null when it is there. */
export function missingOpenDkim(): string | null {
  return existsSync(OPENDKIM) ? null : 'missing: /usr/sbin/opendkim. Install it: apt-get install -y opendkim';
}

/** The Postfix tools this bench needs, or the command that installs them. */
export function missingTools(): string | null {
  const missing = TOOLS.filter((t) => !existsSync(t));
  if (!missing.length) return null;
  return (
    `missing: ${missing.join(', ')}. Install Postfix without configuring or starting the system instance:\n` +
    `  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections\n` +
    `  DEBIAN_FRONTEND=noninteractive apt-get install -y postfix swaks`
  );
}

// ---------------------------------------------------------------------------
// Cleanup of what this module starts: children by pid, Postfix instances by
// `postfix -c DIR stop` (then their master's pid), temp dirs.

const children = new Set<ChildProcess>();
const instances = new Set<PostfixInstance>();
const dirs = new Set<string>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function ownTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-${prefix}-`));
  dirs.add(dir);
  return dir;
}

export function removeDir(dir: string): void {
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

function cleanupAll(): void {
  for (const p of instances) p.stopSync();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  if (!KEEP) for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}
// bench/lib.ts exits on SIGINT/SIGTERM after its own cleanup; 'exit' listeners still run, so this one does too.
process.on('exit', cleanupAll);

// ---------------------------------------------------------------------------
// Ports (a free one: lib.ts's freePort).

/** Resolves once something accepts TCP connections on 127.0.0.1:port. */
export async function untilListening(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

// ---------------------------------------------------------------------------
// CPU of a process tree (Postfix is a master with many short- and long-lived children).

const CLK_TCK = 100;

function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * utime+stime+cutime+cstime (ms) of `pid` and of its live direct children: the
 * CPU of a tree whose exited children were reaped by `pid` (Postfix's master).
 */
export function treeCpuMs(pid: number): number {
  const ticks = (f: string[]) => Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  const own = statFields(pid);
  if (!own) return NaN;
  let total = ticks(own);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (f && Number(f[1]) === pid) total += ticks(f);
  }
  return (total * 1000) / CLK_TCK;
}

/** CPU (ms) of one process, all its threads (utime+stime). */
export function procCpuMs(pid: number): number {
  const f = statFields(pid);
  return f ? ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK : NaN;
}

/** Busy and total jiffies of the whole machine (all CPUs), from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

// ---------------------------------------------------------------------------
// smtp-sink: the receiving MX for both svc and Postfix.

export interface Sink {
  port: number;
  pid: number;
  /** SMTP sessions that have ended at the sink so far (its `sess=` counter). */
  sessions(): number;
  /** Messages received so far ("." seen), from the sink's running counter. */
  count(): number;
  stop(): Promise<void>;
}

/**
 * `smtp-sink -c` writes a running counter ("sess=… quit=… mesg=N\r") to its
 * output after every message; the output goes to a file whose tail is read on
 * demand. (`-M N` would exit on the Nth message without answering it, so it
 * cannot time a run.) Runs as nobody: smtp-sink refuses to keep root.
 */
export async function startSink(dir: string): Promise<Sink> {
  const port = await freePort();
  const file = join(dir, 'sink.out');
  const out = openSync(file, 'w');
  const child = track(
    spawn('/usr/sbin/smtp-sink', ['-u', 'nobody', '-c', '-h', 'mx.dest.test', `127.0.0.1:${port}`, '1024'], {
      stdio: ['ignore', out, 'inherit'],
    }),
  );
  closeSync(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await untilListening(port);
  const fd = openSync(file, 'r');
  const tail = Buffer.alloc(256);
  let last = 0;
  let sess = 0;
  const count = () => {
    const size = fstatSync(fd).size;
    const n = readSync(fd, tail, 0, Math.min(size, tail.length), Math.max(0, size - tail.length));
    const all = [...tail.toString('latin1', 0, n).matchAll(/sess=(\d+) quit=\d+ mesg=(\d+)/g)];
    if (all.length) {
      sess = Math.max(sess, Number(all.at(-1)![1]));
      last = Math.max(last, Number(all.at(-1)![2]));
    }
    return last;
  };
  return {
    port,
    pid: child.pid!,
    count,
    sessions() {
      count();
      return sess;
    },
    async stop() {
      closeSync(fd);
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------
// A throwaway Postfix (config, queue, data and log under one temp dir).

export interface PostfixInstance {
  dir: string;
  port: number;
  masterPid(): number;
  /** "status=sent" deliveries in its log, and messages left in its queue. */
  tally(): { sent: number; queued: number };
  /** Queue files in the hold queue (a flat directory: hold is not hashed by default). */
  held(): number;
  stop(): Promise<void>;
  stopSync(): void;
}

const MASTER_CF = (port: number) => `# A throwaway Postfix for bench:deliver: no chroot, no local delivery needed.
127.0.0.1:${port} inet n - n - - smtpd
pickup    unix n - n 60 1 pickup
cleanup   unix n - n - 0 cleanup
qmgr      unix n - n 300 1 qmgr
rewrite   unix - - n - - trivial-rewrite
bounce    unix - - n - 0 bounce
defer     unix - - n - 0 bounce
trace     unix - - n - 0 bounce
verify    unix - - n - 1 verify
flush     unix n - n 1000? 0 flush
proxymap  unix - - n - - proxymap
proxywrite unix - - n - 1 proxymap
smtp      unix - - n - - smtp
relay     unix - - n - - smtp
showq     unix n - n - - showq
error     unix - - n - - error
retry     unix - - n - - error
discard   unix - - n - - discard
local     unix - n n - - local
anvil     unix - - n - 1 anvil
scache    unix - - n - 1 scache
postlog   unix-dgram n - n - 1 postlogd
`;

const MAIN_CF = (
  dir: string,
  sinkPort: number,
) => `# A throwaway Postfix for bench:deliver: relays everything to smtp-sink, no DNS.
compatibility_level = 3.6
queue_directory = ${dir}/queue
data_directory = ${dir}/data
maillog_file = ${dir}/maillog
maillog_file_prefixes = ${dir}
myhostname = postfix.bench.test
mydomain = bench.test
myorigin = $myhostname
mydestination =
local_recipient_maps =
alias_maps =
alias_database =
mynetworks = 127.0.0.0/8
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
relayhost = [127.0.0.1]:${sinkPort}
smtp_dns_support_level = disabled
smtp_host_lookup = native
smtpd_peername_lookup = no
smtp_tls_security_level = none
smtpd_tls_security_level = none
biff = no
`;

/**
 * `postfix -c DIR/etc start` on a config that puts everything under DIR. The
 * defaults that matter are Postfix's own (20 deliveries in flight per
 * destination, 50 recipients per transaction, fsync of the queue file before
 * the 250 to DATA). The `postfix` command reports fatal errors only to syslog
 * (absent here); its maillog_file is printed on failure.
 */
export async function startPostfix(
  sinkPort: number,
  opts: { hold?: boolean; milterPort?: number } = {},
): Promise<PostfixInstance> {
  const dir = ownTempDir('postfix');
  chmodSync(dir, 0o755); // the daemons run as the postfix user and must reach the queue
  const etc = join(dir, 'etc');
  mkdirSync(etc);
  mkdirSync(join(dir, 'queue'));
  mkdirSync(join(dir, 'data'));
  const uid = Number(spawnSync('id', ['-u', 'postfix'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postfix'], { encoding: 'utf8' }).stdout.trim());
  chownSync(join(dir, 'data'), uid, gid);
  const port = await freePort();
  // hold: every message accepted is put on the hold queue (fsynced like any other), never delivered.
  const hold = opts.hold ? 'smtpd_end_of_data_restrictions = check_client_access static:HOLD\n' : '';
  // milterPort: every message passes a milter (OpenDKIM) before it is queued; a milter that does
  // not answer makes Postfix answer 4xx rather than relay unsigned mail.
  const milter = opts.milterPort
    ? `smtpd_milters = inet:127.0.0.1:${opts.milterPort}\nnon_smtpd_milters = $smtpd_milters\n` +
      'milter_default_action = tempfail\n'
    : '';
  writeFileSync(join(etc, 'main.cf'), MAIN_CF(dir, sinkPort) + hold + milter);
  writeFileSync(join(etc, 'master.cf'), MASTER_CF(port));
  const log = join(dir, 'maillog');
  let stopped = false;
  const pidFile = join(dir, 'queue', 'pid', 'master.pid');
  const masterPid = () => {
    try {
      return Number(readFileSync(pidFile, 'utf8').trim()) || 0;
    } catch {
      return 0;
    }
  };
  const instance: PostfixInstance = {
    dir,
    port,
    masterPid,
    tally() {
      const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
      const sent = text.match(/ status=sent /g)?.length ?? 0;
      const q = spawnSync('/usr/sbin/postqueue', ['-c', etc, '-j'], { encoding: 'utf8' });
      const queued = q.status === 0 ? q.stdout.split('\n').filter(Boolean).length : NaN;
      return { sent, queued };
    },
    held: () => readdirSync(join(dir, 'queue', 'hold')).length,
    stopSync() {
      if (stopped) return;
      stopped = true;
      const pid = masterPid();
      spawnSync('/usr/sbin/postfix', ['-c', etc, 'stop'], { stdio: 'ignore' });
      // `postfix stop` asks the master to end and returns; make sure, by its pid, that it did.
      if (pid) {
        const until = Date.now() + 5000;
        while (Date.now() < until && alive(pid)) spawnSync('sleep', ['0.05']);
        if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
      instances.delete(instance);
      removeDir(dir);
    },
    stop() {
      instance.stopSync();
      return Promise.resolve();
    },
  };
  instances.add(instance);
  const r = spawnSync('/usr/sbin/postfix', ['-c', etc, 'start'], { encoding: 'utf8' });
  if (r.status !== 0) {
    const text = existsSync(log) ? readFileSync(log, 'utf8') : '(no maillog)';
    instance.stopSync();
    throw new Error(`postfix -c ${etc} start failed (${r.status}): ${r.stderr}\n${text}`);
  }
  await untilListening(port);
  return instance;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * smtp-source: `sessions` parallel SMTP sessions, each keeping its connection
 * (-d), sending `messages` copies of the pre-formatted message in `file` (-F)
 * with `rcpts` recipients per transaction (-r: 1to@…, 2to@…, to@… at one domain).
 */
export function runSmtpSource(opts: {
  port: number;
  sessions: number;
  messages: number;
  rcpts: number;
  file: string;
  from: string;
  to: string;
}): Promise<{ code: number | null; stderr: string }> {
  const args = ['-d', '-s', String(opts.sessions), '-m', String(opts.messages), '-r', String(opts.rcpts)];
  args.push('-M', 'client.bench.test', '-f', opts.from, '-t', opts.to, '-F', opts.file, `127.0.0.1:${opts.port}`);
  const child = track(spawn('/usr/sbin/smtp-source', args, { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

// ---------------------------------------------------------------------------
// OpenDKIM: the milter a self-hoster runs beside Postfix to sign mail (issue 36).

export interface OpenDkim {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Debian's `opendkim` in the foreground on 127.0.0.1, signing mail From `domain` with the
 * RSA key `privateKeyPem` under `selector`: relaxed/relaxed, rsa-sha256, as a self-hoster's
 * opendkim.conf would (Debian's defaults otherwise). Runs as the `opendkim` user the package
 * made; its config, key and pid file live in a temp dir.
 */
export async function startOpenDkim(opts: {
  domain: string;
  selector: string;
  privateKeyPem: string;
}): Promise<OpenDkim> {
  const dir = ownTempDir('opendkim');
  chmodSync(dir, 0o755);
  const port = await freePort();
  const keyFile = join(dir, 'key.pem');
  writeFileSync(keyFile, opts.privateKeyPem, { mode: 0o600 });
  const uid = Number(spawnSync('id', ['-u', 'opendkim'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'opendkim'], { encoding: 'utf8' }).stdout.trim());
  if (Number.isInteger(uid) && Number.isInteger(gid)) chownSync(keyFile, uid, gid);
  const conf = join(dir, 'opendkim.conf');
  writeFileSync(
    conf,
    [
      'Syslog no',
      'Mode s',
      `Domain ${opts.domain}`,
      `Selector ${opts.selector}`,
      `KeyFile ${keyFile}`,
      'Canonicalization relaxed/relaxed',
      'SignatureAlgorithm rsa-sha256',
      `Socket inet:${port}@127.0.0.1`,
      'UserID opendkim:opendkim',
      `PidFile ${join(dir, 'opendkim.pid')}`,
      'RequireSafeKeys false',
      '',
    ].join('\n'),
  );
  const child = track(spawn(OPENDKIM, ['-f', '-x', conf], { stdio: ['ignore', 'ignore', 'inherit'] }));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await untilListening(port);
  return {
    port,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      removeDir(dir);
    },
  };
}
