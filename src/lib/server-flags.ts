import { isSea } from 'node:sea';
import { setFlagsFromString } from 'node:v8';

/**
 * Node flags `svc serve` runs with. V8 gives each isolate a young generation of
 * up to 3 × 32–64 MB by default; for a server whose garbage is per-request
 * buffers that is only resident memory (docs/performance.md, "RSS"). 8 rather
 * than 16: bench:deliver's peak RSS on the executable 283–284 → 249–253 MB, and
 * the accept's p99 and CPU per request the same in alternated runs (docs/performance.md,
 * "Hot paths again (issue 36), fourth session").
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=8'];

/** Environment of the re-executed server; read by the C library when a process starts. */
export const SERVER_ENV: Record<string, string> = { MALLOC_ARENA_MAX: '2' };

/**
 * V8 flags `svc serve` sets once it runs. Left to itself, V8 lets the old
 * generation grow to up to 4 × what survived its last full collection before
 * collecting again, and picks the larger factors when collecting is fast, which
 * it is here: the server's garbage is per-request and per-message objects. Each
 * isolate (main, delivery and render workers) then carries tens of MB of dead
 * objects: 385–403 MB of RSS in bench:deliver, 285–297 MB with a fixed factor of
 * 1.3, at the same throughput, and bench:batch unchanged (docs/performance.md).
 * 1.3 made the accepting thread collect its ~32 MB old generation every second
 * under bench:accept (a 4–6 ms pause and as much incremental marking each time);
 * 1.6 keeps bench:deliver at 287–288 MB and takes the accept's p99 from 14.6–15.2
 * to 10.9–11.8 ms and its CPU per request 5 % lower, for 5–12 MB of RSS
 * (docs/performance.md, "Hot paths, second session"). This flag is read at every
 * collection, so it can be set at run time (it is not allowed in NODE_OPTIONS);
 * workers started afterwards share it.
 */
export const SERVER_V8_FLAGS = ['--heap-growing-percent=60'];

/**
 * Young-generation size, MB, of the server's worker threads (delivery, template rendering,
 * the webhook dispatcher): their garbage is per-task buffers, and V8's default nursery only
 * costs resident memory (delivery workers committed 155–162 MB of heap each with it, ~60 MB
 * with 16; docs/performance.md).
 */
export const WORKER_YOUNG_GENERATION_MB = 16;

export function setServerV8Flags(): void {
  for (const f of SERVER_V8_FLAGS) setFlagsFromString(f);
}

/**
 * V8 sizes its heap when the process starts (`v8.setFlagsFromString` is too
 * late), and the single executable cannot carry Node flags (pkg's SEA mode does
 * not forward sea-config `execArgv`). So `svc serve` started without them
 * replaces itself once, same pid and file descriptors, with the flags in
 * NODE_OPTIONS. A flag already given (NODE_OPTIONS or the command line) is left
 * as the user set it, which also ends the loop after the re-exec.
 *
 * The re-exec also caps glibc's malloc arenas (SERVER_ENV, unless set): by
 * default each of the server's threads (main, delivery and render workers, the
 * checkpointer, libuv's pool) may get its own, and freed memory stays spread over
 * them. bench:deliver peaks 3–19 MB lower with 2, at the same CPU per message.
 */
export function reexecServerWithFlags(argv: string[]): void {
  if (typeof process.execve !== 'function') return;
  const given = `${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`;
  const missing = SERVER_NODE_FLAGS.filter((f) => !given.includes(f.slice(0, f.indexOf('='))));
  if (!missing.length) return;
  // In a single executable argv[1] repeats the executable; its own arguments follow.
  const args = isSea() ? argv.slice(2) : [...process.execArgv, ...argv.slice(1)];
  const nodeOptions = [process.env.NODE_OPTIONS, ...missing].filter(Boolean).join(' ');
  try {
    process.execve(process.execPath, [process.execPath, ...args], {
      ...SERVER_ENV,
      ...process.env,
      NODE_OPTIONS: nodeOptions,
    });
  } catch {
    // The process could not be replaced (a sandbox forbidding execve): serve as is, with V8's defaults.
  }
}
