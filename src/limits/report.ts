import { z } from 'zod';
import { iso, type Clock } from '../lib/clock.ts';
import { PLAN_LIMITS, PLANS, type Plan } from './plans.ts';

const time = z.iso.datetime();
const volume = z.object({
  /** 'YYYY-MM' or 'YYYY-MM-DD' (UTC): the usage_counters period. */
  period: z.string(),
  /** Recipients of LIVE emails accepted in the period (TEST sends count nothing). */
  used: z.number().int().min(0),
  /** null: no ceiling. */
  limit: z.number().int().nullable(),
  /** limit − used, never below 0; null without a ceiling. */
  remaining: z.number().int().min(0).nullable(),
  /** When the period's count starts again from 0. */
  resets_at: time,
});

/** The `data` of GET /v1/organizations/{id}/usage. */
export const usageOut = z.object({
  organization_id: z.uuid(),
  plan: z.enum(PLANS),
  monthly_volume: volume,
  /** The organization's daily ceiling, set by the operator; limit null when there is none. */
  daily_volume: volume,
  domains: z.object({ used: z.number().int().min(0), limit: z.number().int().nullable() }),
});
export type Usage = z.infer<typeof usageOut>;

export interface UsageReportDeps {
  usage: { used(orgId: string, period: string): Promise<number> };
  clock: Clock;
  /** The organization's plan and daily ceiling. */
  orgs: { getOrg(id: string): Promise<{ id: string; plan: Plan; daily_limit: number | null }> };
  /** The organization's sending domains (all of them count against the plan, verified or not). */
  domains: { listDomains(orgId: string): Promise<unknown[]> };
}

/** What an organization has used of its plan: the counters the send transaction keeps, against the ceilings. */
export function createUsageReport(deps: UsageReportDeps) {
  return {
    /** This month's and today's recipients and the domains, each against its ceiling (null = none). */
    async usageOf(orgId: string): Promise<Usage> {
      const org = await deps.orgs.getOrg(orgId);
      const now = deps.clock.now();
      const day = iso(now).slice(0, 10);
      const month = day.slice(0, 7);
      const limits = PLAN_LIMITS[org.plan];
      const d = new Date(now);
      const volumeOf = async (period: string, limit: number | null, resetsAt: number) => {
        const used = await deps.usage.used(org.id, period);
        const remaining = limit === null ? null : Math.max(0, limit - used);
        return { period, used, limit, remaining, resets_at: iso(resetsAt) };
      };
      return {
        organization_id: org.id,
        plan: org.plan,
        monthly_volume: await volumeOf(
          month,
          limits.monthlyVolume,
          Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
        ),
        daily_volume: await volumeOf(
          day,
          org.daily_limit,
          Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1),
        ),
        domains: { used: (await deps.domains.listDomains(org.id)).length, limit: limits.domains },
      };
    },
  };
}

export type UsageReport = ReturnType<typeof createUsageReport>;
