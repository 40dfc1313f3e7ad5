import type { Clock } from '../lib/clock.ts';
import type { Actor, Audited } from '../audit/index.ts';

/** What a change touched: an organization, a project or a member, and where it lives. */
export interface ChangeTarget {
  organization_id: string;
  project_id?: string;
  type: string;
  id: string;
}

/** Builds the audit row of a change to `target` by `actor`, stamped with the clock's time. */
export function auditChange(clock: Clock) {
  return (actor: Actor, action: string, target: ChangeTarget, before: unknown, after: unknown): Audited => ({
    actor,
    atMs: clock.now(),
    entry: {
      action,
      organization_id: target.organization_id,
      ...(target.project_id ? { project_id: target.project_id } : {}),
      target_type: target.type,
      target_id: target.id,
      before,
      after,
    },
  });
}
