import { AppError } from '../errors.ts';
import type { Db } from '../store/db.ts';

export interface VolumeLimits {
  monthly: number | null;
  daily: number | null;
}

/** Seconds from `now` to the next UTC month / day (Retry-After, at least 1). */
export function secondsToNextMonth(now: number): number {
  const d = new Date(now);
  return Math.max(1, Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - now) / 1000));
}

export function secondsToNextDay(now: number): number {
  const d = new Date(now);
  return Math.max(1, Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) - now) / 1000));
}

/**
 * Volume counters per organization, used inside the send transaction so that
 * the check and the count are one atomic step.
 */
export function createUsageSql(db: Db) {
  const get = db.prepare<[string, string], { count: number }>(
    'SELECT count FROM usage_counters WHERE organization_id = ? AND period = ?',
  );
  const add = db.prepare(
    `INSERT INTO usage_counters (organization_id, period, count) VALUES (?, ?, ?)
     ON CONFLICT (organization_id, period) DO UPDATE SET count = count + excluded.count`,
  );
  const used = (org: string, period: string) => get.get(org, period)?.count ?? 0;

  return {
    used,
    /** Counts `units` recipients, or throws 429 when a ceiling would be passed (nothing counted then). */
    reserve(orgId: string, units: number, limits: VolumeLimits, now: number): void {
      const day = new Date(now).toISOString().slice(0, 10);
      const month = day.slice(0, 7);
      if (limits.monthly !== null && used(orgId, month) + units > limits.monthly) {
        throw new AppError(
          'monthly_volume_exceeded',
          `The monthly volume of ${limits.monthly} recipients is used up`,
          {
            limit: limits.monthly,
            used: used(orgId, month),
            requested: units,
          },
          secondsToNextMonth(now),
        );
      }
      if (limits.daily !== null && used(orgId, day) + units > limits.daily) {
        throw new AppError(
          'daily_limit_exceeded',
          `The daily limit of ${limits.daily} recipients is reached`,
          {
            limit: limits.daily,
            used: used(orgId, day),
            requested: units,
          },
          secondsToNextDay(now),
        );
      }
      add.run(orgId, month, units);
      add.run(orgId, day, units);
    },
  };
}

export type UsageSql = ReturnType<typeof createUsageSql>;
