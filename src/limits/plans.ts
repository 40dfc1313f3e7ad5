import { AppError } from '../errors.ts';
/** Plan ceilings: the specification's table plus UNLIMITED for the operator (decisions.md). */
export const PLANS = ['FREE', 'PAID', 'PREMIUM', 'UNLIMITED'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  /** Recipients per calendar month (UTC); null = no ceiling. */
  monthlyVolume: number | null;
  domains: number | null;
  webhooks: number | null;
  /** Per-key requests per second on the Public API; null = no limit. */
  requestsPerSecond: number | null;
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  FREE: { monthlyVolume: 100, domains: 1, webhooks: 3, requestsPerSecond: 1 },
  PAID: { monthlyVolume: 10_000, domains: 5, webhooks: 10, requestsPerSecond: 10 },
  PREMIUM: { monthlyVolume: 100_000, domains: 50, webhooks: 1000, requestsPerSecond: 100 },
  UNLIMITED: { monthlyVolume: null, domains: null, webhooks: null, requestsPerSecond: null },
};

/** 422 `plan_limit_exceeded`: the organization's plan allows no more of `resource`. */
export function planLimitError(resource: 'domains' | 'webhooks', plan: Plan, limit: number): AppError {
  const noun = limit === 1 ? resource.slice(0, -1) : resource;
  return new AppError('plan_limit_exceeded', `plan ${plan} allows ${limit} ${noun}`, {
    code: 'plan_limit_exceeded',
    resource,
    plan,
    limit,
  });
}
