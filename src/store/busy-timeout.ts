import type Database from 'better-sqlite3';

/**
 * Runs `fn` with the connection's busy timeout at `ms`, then sets it to `after`.
 * A pragma, not a prepared statement: SQLite applies `PRAGMA busy_timeout = N`
 * when it compiles it, so a prepared one would not change it again.
 */
export function withBusyTimeout<T>(db: Database.Database, ms: number, after: number, fn: () => T): T {
  db.pragma(`busy_timeout = ${ms}`);
  try {
    return fn();
  } finally {
    db.pragma(`busy_timeout = ${after}`);
  }
}
