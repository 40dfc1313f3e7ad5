import type { Actor, Audited } from '../audit/index.ts';
import type { ChangeTarget } from '../accounts/index.ts';
import type { Logger } from '../lib/logger.ts';
import type { DkimKeyRow, KeyPlan, KeyStep } from './dkim-keys.ts';
import type { DomainRow, KeyWrite } from './store.ts';

/** Builds an audit row (accounts/audit-change.ts auditChange). */
export type Change = (actor: Actor, action: string, target: ChangeTarget, before: unknown, after: unknown) => Audited;

/** What the audit log and the log keep of a key: never its private key. */
const shownKey = (k: DkimKeyRow) => ({
  selector: k.selector,
  algorithm: k.algorithm,
  state: k.state,
  activated_at: k.activated_at,
  retire_after: k.retire_after,
});

/** A plan with the audit row of each of its steps, as `actor` (the operator for the server's own checks). */
export function withAudits(
  change: Change,
  actor: Actor,
  row: Pick<DomainRow, 'id' | 'organization_id'>,
  plan: KeyPlan,
): KeyWrite {
  const target = { organization_id: row.organization_id, type: 'domain', id: row.id };
  const audits = plan.steps.map((s) =>
    change(actor, `domain.${s.action}`, target, s.replaces ? shownKey(s.replaces) : null, shownKey(s.key)),
  );
  return { ...plan, audits };
}

const MESSAGES: Record<KeyStep['action'], string> = {
  dkim_rotation_started: 'DKIM rotation started: publish the new key; svc signs with it once it is seen',
  dkim_key_activated: 'DKIM key seen published: signing with it now',
  dkim_key_retiring: 'DKIM key no longer signs: its record stays listed until its grace period ends',
  dkim_key_retired: 'DKIM key retired: its record can be removed',
};

/** Logs each step of a plan carried out for `domain`. */
export function logSteps(logger: Logger, domain: string, steps: KeyStep[]): void {
  for (const s of steps) {
    const fields = { domain, ...shownKey(s.key), ...(s.replaces ? { replaces: s.replaces.selector } : {}) };
    logger.info(fields, MESSAGES[s.action]);
  }
}
