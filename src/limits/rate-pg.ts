import type { Clock } from '../lib/clock.ts';
import type { PgPool } from '../store/pg.ts';
import type { RateResult } from './rate.ts';

/** Windows older than this many seconds are deleted, once a minute by whichever node looks. */
const KEEP_SECONDS = 60;

/**
 * The per-key request rate on PostgreSQL (issue 17): the same one-second fixed window as the
 * SQLite server's memory (rate.ts), counted in `rate_windows` so that every node sees every
 * node's requests. One statement a request: the count goes up only while under the limit, so
 * concurrent requests on any nodes never pass it together (the row's lock orders them).
 */
export function createPgRateLimiter(pool: PgPool, clock: Clock) {
  let lastSweep = 0;
  return {
    async hit(key: string, limit: number): Promise<RateResult> {
      const now = clock.now();
      const window = Math.floor(now / 1000);
      const reset = Math.max(1, Math.ceil(((window + 1) * 1000 - now) / 1000));
      if (window - lastSweep >= KEEP_SECONDS) {
        lastSweep = window;
        void pool.query('DELETE FROM rate_windows WHERE window_start < $1', [window - KEEP_SECONDS]).catch(() => {});
      }
      const r = await pool.query<{ count: number }>(
        `INSERT INTO rate_windows (key, window_start, count) VALUES ($1, $2, 1)
         ON CONFLICT (key, window_start) DO UPDATE SET count = rate_windows.count + 1
           WHERE rate_windows.count < $3
         RETURNING count`,
        [key, window, limit],
      );
      const count = r.rows[0]?.count;
      if (count === undefined || count > limit) return { allowed: false, limit, remaining: 0, reset };
      return { allowed: true, limit, remaining: limit - count, reset };
    },
  };
}
