import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDiskGuard, RESERVE_FILE, type DiskGuardOptions, type StorageSpace, type StorageWatch } from './disk.ts';

const RESERVE = 1024;
const TOTAL = 1000 * RESERVE;

let dir: string;
let guard: StorageWatch | undefined;
afterEach(() => {
  guard?.stop();
  guard = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A guard over a temp dir whose filesystem has `space.free` bytes free (changed by the test), looking every few ms. */
function start(overrides: Partial<DiskGuardOptions> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'svc-disk-'));
  const space: StorageSpace = { free: TOTAL / 2, total: TOTAL };
  const lines: { level: number; msg: string; used_percent?: number }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const truncateWal = vi.fn(() => Promise.resolve(true));
  const writes = vi.fn((path: string, bytes: number) => Promise.resolve(writeFileSync(path, Buffer.alloc(bytes))));
  const opts = { dir, logger, truncateWal, reserveBytes: RESERVE, checkMs: 2, fullCheckMs: 2, ...overrides };
  const make = () => {
    guard = createDiskGuard({ ...opts, fs: { space: () => ({ ...space }), writeReserve: writes, ...overrides.fs } });
    return guard;
  };
  return { space, lines, truncateWal, writes, make, reserve: join(dir, RESERVE_FILE) };
}

const messages = (lines: { msg: string }[]) => lines.map((l) => l.msg);

describe('createDiskGuard', () => {
  it('warns once at 90 % used and says so once below 85 % again', async () => {
    const t = start();
    t.make();
    await vi.waitFor(() => expect(existsSync(t.reserve)).toBe(true));
    t.space.free = TOTAL * 0.1;
    await vi.waitFor(() =>
      expect(messages(t.lines)).toContain('the data dir is over 90 % full: free space before writes fail'),
    );
    expect(t.lines.find((l) => l.msg.startsWith('the data dir is over'))).toMatchObject({
      level: 40,
      used_percent: 90,
    });
    // Between 85 and 90 %: no new line either way.
    t.space.free = TOTAL * 0.12;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.lines).toHaveLength(1);
    t.space.free = TOTAL * 0.2;
    await vi.waitFor(() => expect(messages(t.lines)).toContain('the data dir is below 85 % full again'));
    expect(t.lines.at(-1)).toMatchObject({ level: 30, used_percent: 80 });
    expect(t.lines).toHaveLength(2);
  });

  it('keeps a reserve an earlier run left, without writing it again', async () => {
    const t = start();
    writeFileSync(t.reserve, Buffer.alloc(RESERVE));
    // Room for the reserve once, not twice: a missing reserve would not be written, a kept one counts.
    t.space.free = RESERVE;
    const g = t.make();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.writes).not.toHaveBeenCalled();
    expect(statSync(t.reserve).size).toBe(RESERVE);
    expect(g.state().full).toBe(false);
  });

  it('stays full when a write fails while the reserve is being written again, and leaves it on the next look', async () => {
    const t = start();
    const g = t.make();
    await vi.waitFor(() => expect(existsSync(t.reserve)).toBe(true));
    const seen: { full: boolean; reserve: boolean }[] = [];
    t.writes.mockImplementation((path, bytes) => {
      // What the look before this one left.
      seen.push({ full: g.state().full, reserve: existsSync(path) });
      writeFileSync(path, Buffer.alloc(bytes));
      // The first time, a commit fails for lack of space meanwhile: the room goes to the checkpoint.
      if (seen.length === 1) g.noteFull();
      return Promise.resolve();
    });
    g.noteFull();
    await vi.waitFor(() => expect(g.state().full).toBe(false));
    expect(seen).toEqual([
      { full: true, reserve: false },
      { full: true, reserve: false },
    ]);
    expect(existsSync(t.reserve)).toBe(true);
  });

  it('leaves the full state once there is room for the reserve twice, after emptying the WAL', async () => {
    const t = start();
    const g = t.make();
    await vi.waitFor(() => expect(existsSync(t.reserve)).toBe(true));
    t.space.free = RESERVE;
    g.noteFull();
    expect(existsSync(t.reserve)).toBe(false);
    expect(messages(t.lines)).toContain(
      'storage: the disk is full, writes are refused (503 storage_full, 452 4.3.1) until space is back',
    );
    await vi.waitFor(() => expect(t.truncateWal.mock.calls.length).toBeGreaterThan(2));
    expect(g.state().full).toBe(true);
    // The reserve it released is the checkpoint's: writes are refused, not tried into it.
    expect(g.refusing()).toBe(true);
    t.space.free = 2 * RESERVE;
    await vi.waitFor(() => expect(g.state().full).toBe(false));
    expect(g.refusing()).toBe(false);
    expect(existsSync(t.reserve)).toBe(true);
    expect(messages(t.lines)).toContain('storage: space is back, writes are accepted');
  });

  it("waits for the worker's TRUNCATE before it looks for room", async () => {
    let finish!: (truncated: boolean) => void;
    const t = start({ truncateWal: () => new Promise<boolean>((resolve) => (finish = resolve)) });
    const g = t.make();
    await vi.waitFor(() => expect(existsSync(t.reserve)).toBe(true));
    g.noteFull();
    await vi.waitFor(() => expect(finish).toBeDefined());
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Room is there, but the WAL is not yet emptied: still full.
    expect(g.state().full).toBe(true);
    finish(true);
    await vi.waitFor(() => expect(g.state().full).toBe(false));
  });
});
