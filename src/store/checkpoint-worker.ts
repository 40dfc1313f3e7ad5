// Runs SQLite WAL checkpoints on its own connection, off the main event loop:
// with wal_autocheckpoint=0 on the writer, this keeps the WAL short without a
// checkpoint ever landing inside a commit on the request path.
//
// A PASSIVE checkpoint copies pages back into the database but never resets the
// WAL: SQLite starts writing the WAL from its beginning again only when every
// frame has been copied back at the moment a write transaction starts. Under a
// steady stream of commits that moment never comes, and the WAL grows without
// bound (600 MB in 10 s of bench:batch). So once the WAL passes `restartFrames`,
// the worker asks for a RESTART checkpoint: it holds off new writers while it
// copies the few frames committed since its last pass, then the next commit
// rewrites the WAL from the top. The committer never blocks the event loop on
// that lock (its BEGIN is non-blocking and retried; see committer.ts).
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointerSettings } from './db.ts';
import { ioTimeout, type Timer } from '../lib/clock.ts';
import { withBusyTimeout } from './busy-timeout.ts';

const { file, idleMs, busyMs, restartFrames } = workerData as CheckpointerSettings & { file: string };
/** How long a PASSIVE pass waits for a lock (better-sqlite3's `timeout` is the busy timeout). */
const BUSY_WAIT_MS = 5000;
const db = new Database(file, { timeout: BUSY_WAIT_MS });

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

/** How soon a RESTART that found the database busy is tried again. */
const RETRY_MS = 5;
// While it waits for the write lock or for readers, SQLite's busy handler sleeps
// in steps of up to 100 ms, and during a RESTART it sleeps holding the write
// lock: every commit would wait that long. A few milliseconds at most, then
// give up and try again on the next pass.
const RESTART_WAIT_MS = 3;

// Its pacing is I/O, not domain time, so like the committer it runs on the real clock.
let timer: Timer | undefined;
let lastLog = -1;

/** One pass; returns how long to wait before the next: soon while commits keep coming. */
function pass(): number {
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[];
    if (!passive || passive.log <= 0 || passive.log === lastLog) return idleMs;
    lastLog = passive.log;
    if (passive.log >= restartFrames && !restart()) return RETRY_MS;
    return busyMs;
  } catch {
    // A busy or locked database is fine: the next pass tries again.
    return idleMs;
  }
}

/**
 * Restarts the WAL; false when the database was busy (the WAL was then only
 * checkpointed as far as it could be without waiting). A short catch-up first,
 * so the RESTART itself copies only what was committed during a short last pass.
 */
function restart(): boolean {
  for (let passes = 0, took = Infinity; took > 5 && passes < 3; passes++) {
    const t = performance.now();
    db.pragma('wal_checkpoint(PASSIVE)');
    took = performance.now() - t;
  }
  const [r] = withBusyTimeout(
    db,
    RESTART_WAIT_MS,
    BUSY_WAIT_MS,
    () => db.pragma('wal_checkpoint(RESTART)') as CheckpointRow[],
  );
  return r?.busy === 0;
}

function loop(): void {
  timer = ioTimeout(loop, pass());
}
timer = ioTimeout(loop, busyMs);

/**
 * A TRUNCATE checkpoint, asked for by the disk guard while the disk is full (disk.ts): it
 * copies the WAL into the database and gives the WAL's space back. It does not wait for a
 * lock (the guard asks again shortly); true when the WAL is now empty.
 */
function truncate(): boolean {
  try {
    const [r] = withBusyTimeout(db, 0, BUSY_WAIT_MS, () => db.pragma('wal_checkpoint(TRUNCATE)') as CheckpointRow[]);
    return r?.busy === 0;
  } catch {
    return false;
  }
}

parentPort?.on('message', (msg) => {
  if (msg === 'stop') {
    timer?.cancel();
    db.close();
    process.exit(0);
  }
  if (msg === 'truncate') parentPort?.postMessage({ truncated: truncate() });
});
