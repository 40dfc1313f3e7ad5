// Runs SQLite WAL checkpoints on its own connection, off the main event loop:
// with wal_autocheckpoint=0 on the writer, this keeps the WAL short without a
// checkpoint ever landing inside a commit on the request path.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file, { timeout: 5000 });
db.pragma('busy_timeout = 5000');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // A busy database is fine: the next tick tries again.
  }
}, intervalMs);

parentPort?.on('message', (msg) => {
  if (msg === 'stop') {
    clearInterval(timer);
    db.close();
    process.exit(0);
  }
});
