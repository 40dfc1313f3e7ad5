import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Why a test cannot mount a tmpfs here, or undefined when it can: a small real filesystem to
 * fill (the disk-full tests). Mounting needs root, as CI and the dev machine run.
 */
export function cannotMountTmpfs(): string | undefined {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const probe = mkdtempSync(join(tmpdir(), 'svc-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'mount -t tmpfs is not allowed here (a container without CAP_SYS_ADMIN)';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** A tmpfs of `size` (`8m`) on a new directory under the OS temp dir; `options` are added to mount's. */
export function mountTmpfs(size: string, options = ''): { dir: string; unmount: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${options ? `,${options}` : ''}`, 'tmpfs', dir]);
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Appends to `file` until its filesystem has no byte left. */
export function fillDisk(file: string): void {
  const fd = openSync(file, 'a');
  try {
    for (const n of [64 * 1024, 4096, 512, 1]) {
      const chunk = Buffer.alloc(n, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
}
