import { userInfo } from 'node:os';
import { z } from 'zod';

/** Who made a change: a signed-in user (with the client IP), or the admin CLI on the server. */
export type Actor = { type: 'user'; user_id: string; ip: string | null } | { type: 'cli'; os_user: string };

/** What changed: one management write. `before` is null on create, `after` null on delete. */
export interface AuditEntry {
  action: string;
  organization_id?: string;
  project_id?: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
}

/** A write's audit row as a repo receives it: who, when, and what it records of the change. */
export interface Audited {
  actor: Actor;
  atMs: number;
  entry: AuditEntry;
}

/** An audit row as the API shows it. */
export interface AuditLog {
  id: string;
  organization_id: string;
  project_id: string | null;
  actor: { type: 'user' | 'cli'; id: string | null; name: string | null; ip: string | null };
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  created_at: string;
}

/** GET …/audit-logs: newest first, a page before the row `before`; `format=csv` streams every row instead. */
export const listAuditQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  before: z.uuid().optional(),
  format: z.enum(['json', 'csv']).default('json'),
});

/** The operator at the server: the admin CLI (and what the server does on its own, such as first start). */
export function operator(): Actor {
  let os_user = 'unknown';
  try {
    os_user = userInfo().username;
  } catch {
    // No passwd entry for this uid (a container): the CLI is still the actor.
  }
  return { type: 'cli', os_user };
}
