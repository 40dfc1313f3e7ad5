// The bodies of `suppression.added` and `suppression.removed` (webhooks/notices.ts): one
// function for both stores and every path that changes a list (the API and its imports, a hard
// bounce, a complaint, an unsubscribe).
import { notice, type Notice } from '../events/index.ts';
import type { SuppressionReason } from './schema.ts';

/** An entry as the notice names it; `source_email_id` is the email whose bounce, complaint or unsubscribe added it. */
export interface SuppressionChange {
  project_id: string;
  email: string;
  reason: SuppressionReason;
  created_at: string;
  source_email_id?: string | null | undefined;
}

/**
 * An address joined (`added`, only when it was not listed: a new reason for a listed address
 * is no event) or left (`removed`) the project's list, at `at`.
 */
export function suppressionNotice(kind: 'added' | 'removed', s: SuppressionChange, at: string): Notice {
  return notice(`suppression.${kind}`, at, {
    project_id: s.project_id,
    suppression: { email: s.email, reason: s.reason, created_at: s.created_at },
    email_id: s.source_email_id ?? null,
  });
}
