// npm run bench:accept-store — svc's CPU per accepted email inside the emails store alone, on
// SQLite, in this process: no HTTP, no render, no fsync wait counted as CPU. It is how a change
// to the accept's store code (issue 30's accept plan) shows its cost when bench:accept's spread
// (±15 % on this shared machine) would hide it.
//
// Each accept has three recipients, the suppression list, the volume and an idempotency key:
// every step of the plan runs. BENCH_ROUNDS rounds of 200 concurrent accepts (group-committed)
// after 20 rounds of warm-up. Give trees to compare as arguments (a git worktree of the base,
// then this tree); each is run in the order given, then in reverse, in its own child process:
//   git worktree add --detach /tmp/base <commit> && ln -s $PWD/node_modules /tmp/base/
//   npm run bench:accept-store -- /tmp/base .
// Settings (env): BENCH_ROUNDS (100).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { env, machine, ROOT } from './lib.ts';

const ROUNDS = env.num('BENCH_ROUNDS', 100);
const AT = '2026-11-26T12:00:00.000Z';

/** One measurement of `root`'s emails store: CPU µs per accept and accepts per second. */
async function measure(root: string): Promise<void> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { openSqliteStore } = await load('src/app-store.ts');
  const { FakeClock } = await load('src/lib/clock.ts');
  const { newEmail } = await load('test/postgres/email-fixture.ts');
  const dir = mkdtempSync(join(tmpdir(), 'svc-accept-store-'));
  const store = openSqliteStore(join(dir, 'data'), { clock: new FakeClock(Date.parse(AT)), createDataDir: true });
  store.sqlite
    .exec(`INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'o@example.com', 'h', '${AT}');
    INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', '${AT}');
    INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', '${AT}')`);
  const to = ['a@x.test', 'b@x.test', 'c@x.test'];
  let n = 0;
  const round = () =>
    Promise.all(
      Array.from({ length: 200 }, () =>
        store.emails.acceptEmail(
          newEmail(crypto.randomUUID(), { to }),
          to.map((address) => ({ address, kind: 'to' })),
          {
            suppress: true,
            volume: { orgId: 'o1', limits: { monthly: null, daily: null }, now: Date.parse(AT) },
            idempotency: { key: `k${n++}`, hash: 'h', expiresAt: '2026-11-27T12:00:00.000Z' },
          },
        ),
      ),
    );
  for (let i = 0; i < 20; i++) await round();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < ROUNDS; i++) await round();
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const accepts = ROUNDS * 200;
  console.log(
    `${root}: ${((cpu.user + cpu.system) / accepts).toFixed(1)} µs CPU per accept, ${Math.round(accepts / seconds)} accepts/s`,
  );
}

if (process.env.BENCH_ACCEPT_STORE_ROOT) {
  await measure(process.env.BENCH_ACCEPT_STORE_ROOT);
} else {
  const trees = (process.argv.slice(2).length ? process.argv.slice(2) : ['.']).map((t) => resolve(ROOT, t));
  console.log(`bench:accept-store — ${machine()}, ${new Date().toISOString()}`);
  for (const root of [...trees, ...[...trees].reverse()]) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/accept-store.ts')], {
      env: { ...process.env, BENCH_ACCEPT_STORE_ROOT: root },
      stdio: 'inherit',
    });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}
