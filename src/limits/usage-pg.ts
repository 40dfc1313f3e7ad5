import { AppError } from '../errors.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgTx } from '../store/pg-committer.ts';
import { secondsToNextDay, secondsToNextMonth, type VolumeLimits } from './usage.ts';

/**
 * Volume counters per organization on PostgreSQL, used inside the send transaction: the
 * SQLite version's contract (usage.ts), held across nodes. Each count is one conditional
 * upsert: the counter row's lock makes concurrent sends on every node take their turn, and
 * the ceiling is checked on the value each finds, so together they never pass it.
 */
export function createPgUsage(pool: PgPool) {
  const usedBy = async (q: Pick<PgTx, 'query'>, org: string, period: string) =>
    (
      await q.query<{ count: number }>('SELECT count FROM usage_counters WHERE organization_id = $1 AND period = $2', [
        org,
        period,
      ])
    ).rows[0]?.count ?? 0;

  /** Adds `units` to a period's count unless that would pass `limit` (null: no limit); false then. */
  async function add(t: PgTx, org: string, period: string, units: number, limit: number | null): Promise<boolean> {
    if (limit !== null && units > limit) return false;
    const r = await t.query(
      `INSERT INTO usage_counters (organization_id, period, count) VALUES ($1, $2, $3)
       ON CONFLICT (organization_id, period) DO UPDATE SET count = usage_counters.count + excluded.count
       WHERE $4::bigint IS NULL OR usage_counters.count + excluded.count <= $4::bigint`,
      [org, period, units, limit],
    );
    return (r.rowCount ?? 0) > 0;
  }

  return {
    used: (org: string, period: string) => usedBy(pool, org, period),
    /**
     * Counts `units` recipients, or throws 429 when a ceiling would be passed. The month is
     * counted before the day; when the day then refuses, the send's transaction undoes the
     * month's count with the rest of its writes.
     */
    async reserve(t: PgTx, orgId: string, units: number, limits: VolumeLimits, now: number): Promise<void> {
      const day = new Date(now).toISOString().slice(0, 10);
      const month = day.slice(0, 7);
      // Counted once per group, at its end (PgTx.addAtCommit): every send of an organization
      // updates these two rows, and their locks would make the nodes' groups take turns.
      const monthly = (tx: PgTx, total: number) => add(tx, orgId, month, total, limits.monthly);
      if (!(await t.addAtCommit(`usage ${orgId} ${month}`, units, monthly))) {
        throw new AppError(
          'monthly_volume_exceeded',
          `The monthly volume of ${limits.monthly} recipients is used up`,
          { limit: limits.monthly, used: await usedBy(t, orgId, month), requested: units },
          secondsToNextMonth(now),
        );
      }
      const daily = (tx: PgTx, total: number) => add(tx, orgId, day, total, limits.daily);
      if (!(await t.addAtCommit(`usage ${orgId} ${day}`, units, daily))) {
        throw new AppError(
          'daily_limit_exceeded',
          `The daily limit of ${limits.daily} recipients is reached`,
          { limit: limits.daily, used: await usedBy(t, orgId, day), requested: units },
          secondsToNextDay(now),
        );
      }
    },
  };
}

export type PgUsage = ReturnType<typeof createPgUsage>;
