import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSvc, startServe } from './cli-runner.ts';

// The data dir holds DKIM private keys and password and key hashes: it is its owner's only.

let root: string;
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
/** Every file and folder in the data dir with its mode. */
const modes = (data: string) =>
  Object.fromEntries([['.', modeOf(data)], ...readdirSync(data).map((f) => [f, modeOf(join(data, f))])]);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-data-dir-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const init = ['init', '--email', 'o@example.com', '--password', 'pw-123456789'];

describe.each(['022', '000'])('under umask %s', (umask) => {
  it('svc init creates the data dir 700 and the database 600', async () => {
    const dir = mkdtempSync(join(root, 'init-'));
    const r = await runSvc(dir, init, {}, { umask });
    expect(r.code).toBe(0);
    expect(modes(join(dir, 'data'))).toEqual({ '.': '700', 'svc.sqlite': '600' });
  });

  it('svc serve creates them so too, and the WAL and shared memory it writes while serving are 600', async () => {
    const dir = mkdtempSync(join(root, 'serve-'));
    const served = await startServe(dir, [], {}, { umask });
    try {
      // The disk guard writes its reserve just after the start (issue 26): wait for it.
      await vi.waitFor(() => expect(existsSync(join(dir, 'data', 'reserve'))).toBe(true), { timeout: 5000 });
      expect(modes(join(dir, 'data'))).toEqual({
        '.': '700',
        'svc.sqlite': '600',
        'svc.sqlite-wal': '600',
        'svc.sqlite-shm': '600',
        // The running server's pid, for svc restore (removed when it stops).
        'serve.pid': '600',
        // Space kept back to let SQLite checkpoint on a full disk (src/store/disk.ts).
        reserve: '600',
      });
      expect(served.log()).not.toContain('readable by others');
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });
});

describe('an existing data dir that others can read', () => {
  it('makes svc serve warn at start, naming each path and the chmod that fixes it', async () => {
    const dir = mkdtempSync(join(root, 'open-'));
    expect((await runSvc(dir, init)).code).toBe(0);
    const data = join(dir, 'data');
    chmodSync(data, 0o755);
    chmodSync(join(data, 'svc.sqlite'), 0o644);
    const served = await startServe(dir);
    expect(await served.stop()).toBe(0);
    const warnings = served
      .log()
      .split('\n')
      .filter((l) => l.includes('readable by others'))
      .map((l) => JSON.parse(l) as { level: number; path: string; fix: string });
    // SQLite gives the WAL and shared memory the database's mode: exposed too.
    const file = (name: string) => [40, join(data, name), `chmod 600 ${join(data, name)}`];
    expect(warnings.map((w) => [w.level, w.path, w.fix])).toEqual([
      [40, data, `chmod 700 ${data}`],
      file('svc.sqlite'),
      file('svc.sqlite-shm'),
      file('svc.sqlite-wal'),
    ]);
  });
});

describe('a data dir that does not exist', () => {
  it.each([
    ['keys', 'list', '--project', 'Default'],
    ['emails', 'list', '--project', 'Default', '--json'],
    ['domains', 'show', 'example.com'],
    ['suppressions', 'export', '--project', 'Default'],
    ['orgs', 'list'],
  ])('is not created by %s …: exit 1, one line naming it and saying to run svc init or svc serve', async (...args) => {
    const dir = mkdtempSync(join(root, 'typo-'));
    const typo = join(dir, 'no', 'such', 'dir');
    const r = await runSvc(dir, ['--data-dir', typo, ...args]);
    expect(r.code).toBe(1);
    const message = args.includes('--json') ? (r.json().error.message as string) : r.stderr;
    expect(message.trimEnd().split('\n')).toHaveLength(1);
    expect(message).toContain(`no svc data dir at ${typo}`);
    expect(message).toMatch(/svc init.*svc serve/);
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it('nor is an existing folder with no database in it turned into one', async () => {
    const dir = mkdtempSync(join(root, 'empty-'));
    const r = await runSvc(dir, ['--data-dir', dir, 'keys', 'list', '--project', 'Default']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no svc data dir at ${dir}`);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('a first start that did not finish', () => {
  it('leaves no database behind when its first open fails, so a later command finds no data dir', async () => {
    const dir = mkdtempSync(join(root, 'failed-'));
    const data = join(dir, 'data');
    // A folder where SQLite must write its WAL: the first open fails after the file was made.
    mkdirSync(join(data, 'svc.sqlite-wal'), { recursive: true });
    const r = await runSvc(dir, init);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(readdirSync(data)).toEqual(['svc.sqlite-wal']);
    rmSync(join(data, 'svc.sqlite-wal'), { recursive: true });
    const later = await runSvc(dir, ['keys', 'list', '--project', 'Default']);
    expect(later.code).toBe(1);
    expect(later.stderr).toContain(`no svc data dir at ${data}`);
  });

  it('is not taken for a data dir when it left an empty svc.sqlite; svc init then makes one of it', async () => {
    const dir = mkdtempSync(join(root, 'killed-'));
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    writeFileSync(join(data, 'svc.sqlite'), '', { mode: 0o600 });
    const r = await runSvc(dir, ['keys', 'list', '--project', 'Default']);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `error: store_unavailable: no svc data dir at ${data} (its svc.sqlite is empty: a first start that did not finish): ` +
        'check --data-dir, or run `svc init` or `svc serve` with it to create one',
    ]);
    expect((await runSvc(dir, init)).code).toBe(0);
    expect((await runSvc(dir, ['keys', 'list', '--project', 'Default'])).code).toBe(0);
  });
});
