export { LIMITS } from './constants.ts';
export { PLANS, PLAN_LIMITS, type Plan, type PlanLimits } from './plans.ts';
export { createRateLimiter, requestRateOf, type RateLimiter, type RateResult } from './rate.ts';
export { createUsageSql, secondsToNextMonth, secondsToNextDay, type UsageSql, type VolumeLimits } from './usage.ts';
export { createUsageReport, usageOut, type Usage, type UsageReport } from './report.ts';
export { planLimitError } from './plans.ts';
export type { PgUsage } from './usage-pg.ts';
