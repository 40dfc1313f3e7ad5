import type { Clock } from '../lib/clock.ts';
import type { FailureWindows } from '../lib/failure-windows.ts';
import type { PgPool } from '../store/pg.ts';

/** Expired windows of one counter are deleted at most this often, by whichever node looks. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Failure windows shared by the nodes (PostgreSQL migration 0007): the memory windows'
 * semantics, one row per key in `failure_windows`, keys prefixed with `name` so that each
 * counter (logins, SMTP AUTH) sweeps only its own. A failure is one upsert that starts a new
 * window when the row's has passed, so concurrent failures on several nodes all count.
 */
export function createPgFailureWindows(pool: PgPool, clock: Clock, name: string, windowMs: number): FailureWindows {
  const prefix = `${name}:`;
  let lastSweep = 0;
  const window = async (key: string) => {
    const r = await pool.query<{ window_start: number; failures: number }>(
      'SELECT window_start, failures FROM failure_windows WHERE key = $1',
      [prefix + key],
    );
    const w = r.rows[0];
    const elapsedMs = w ? clock.now() - w.window_start : windowMs;
    return w && elapsedMs < windowMs ? { failures: w.failures, elapsedMs } : undefined;
  };
  return {
    window,
    async waitMs(key, limit) {
      const w = await window(key);
      return w && w.failures >= limit ? windowMs - w.elapsedMs : 0;
    },
    async recordFailure(key) {
      const now = clock.now();
      if (now - lastSweep >= SWEEP_EVERY_MS) {
        lastSweep = now;
        void pool
          .query("DELETE FROM failure_windows WHERE window_start <= $1 AND key LIKE $2 || '%'", [
            now - windowMs,
            prefix,
          ])
          .catch(() => {});
      }
      await pool.query(
        `INSERT INTO failure_windows (key, window_start, failures) VALUES ($1, $2, 1)
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN failure_windows.window_start <= $2 - $3 THEN 1 ELSE failure_windows.failures + 1 END,
           window_start = CASE WHEN failure_windows.window_start <= $2 - $3 THEN $2 ELSE failure_windows.window_start END`,
        [prefix + key, now, windowMs],
      );
    },
    async clear(key) {
      await pool.query('DELETE FROM failure_windows WHERE key = $1', [prefix + key]);
    },
  };
}
