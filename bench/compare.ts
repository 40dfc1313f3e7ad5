// npm run bench:compare — the same benchmarks on two versions of svc, in one run: a base
// commit (BENCH_BASE, checked out in a temporary git worktree) and the working tree, in the
// order base, head, head, base, so the machine's drift falls on both alike. It is how a
// refactor shows that nothing got slower (issue 30: "bench:check before and after, on both
// stores, in the same run"): bench:check runs the hot paths on SQLite against their peers;
// bench:nodes runs delivery on SQLite, on one PostgreSQL node and on two.
//
// Settings (env): BENCH_BASE (a commit or ref, required), BENCH_SUITES (check,nodes), and
// what each suite takes (BENCH_SECONDS, BENCH_MESSAGES, BENCH_SKIP, BENCH_ONLY …), passed on.
// Prints each run's own lines under a header, then the figures side by side.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machine, ROOT } from './lib.ts';

const base = process.env.BENCH_BASE;
if (!base) {
  console.error('error: set BENCH_BASE to the commit to compare with (e.g. BENCH_BASE=HEAD~3)');
  process.exit(2);
}
const suites = (process.env.BENCH_SUITES ?? 'check,nodes').split(',').filter(Boolean);
const unknown = suites.filter((s) => !['check', 'nodes'].includes(s));
if (unknown.length > 0) {
  console.error(`error: BENCH_SUITES takes check and nodes, not ${unknown.join(', ')}`);
  process.exit(2);
}
const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const sha = git('rev-parse', '--verify', `${base}^{commit}`).stdout.trim();
if (!sha) {
  console.error(`error: BENCH_BASE=${base} is no commit of this repository`);
  process.exit(2);
}
const head = `${git('rev-parse', '--short', 'HEAD').stdout.trim()}${git('status', '--porcelain').stdout.trim() ? '+changes' : ''}`;
if (git('diff', '--quiet', sha, 'HEAD', '--', 'package-lock.json').status !== 0) {
  console.error('note: package-lock.json differs between the two: the base runs on the head node_modules');
}
const tree = mkdtempSync(join(tmpdir(), 'svc-bench-base-'));
rmSync(tree, { recursive: true });
const added = git('worktree', 'add', '--detach', tree, sha);
if (added.status !== 0) {
  console.error(`error: git worktree add failed: ${added.stderr.trim()}`);
  process.exit(1);
}
symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
const cleanup = () => {
  git('worktree', 'remove', '--force', tree);
  if (existsSync(tree)) rmSync(tree, { recursive: true, force: true });
};
process.once('SIGINT', () => {
  cleanup();
  process.exit(130);
});

/** One suite from one tree: its stdout (what it prints), echoed as it comes. */
async function run(suite: string, cwd: string, label: string): Promise<string> {
  console.log(`\n== ${label}: bench:${suite} ==`);
  const child = spawn(process.execPath, ['--import', 'tsx', `bench/${suite}.ts`], {
    cwd,
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    out += s;
    process.stdout.write(s);
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) console.log(`(bench:${suite} exited ${code})`);
  return out;
}

const runs: { suite: string; label: string; out: string }[] = [];
try {
  for (const suite of suites) {
    for (const [cwd, label] of [
      [tree, `base ${sha.slice(0, 7)}`],
      [ROOT, `head ${head}`],
      [ROOT, `head ${head}`],
      [tree, `base ${sha.slice(0, 7)}`],
    ] as const) {
      runs.push({ suite, label, out: await run(suite, cwd, label) });
    }
  }
} finally {
  cleanup();
}

// The figures side by side: bench:check's "svc … ratio" lines and bench:nodes' result lines.
const FIGURE = /^(?: {2}\S.*(?:emails\/s delivered|×;).*|ratios: .*)$/gm;
console.log(`\nbench:compare — ${machine()}, ${new Date().toISOString()}`);
for (const r of runs) {
  console.log(`\n${r.label}, bench:${r.suite}:`);
  for (const line of r.out.match(FIGURE) ?? ['  (no figures: see the output above)']) console.log(line);
}
