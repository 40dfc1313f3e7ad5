import { AppError } from '../errors.ts';
import { iso } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { Actor, Audited } from '../audit/index.ts';
import type { Attachment } from './content.ts';
import type { EmailRow, NewEmail, SendResponse } from './store.ts';

/**
 * Refuses what cannot be sent again: the onboarding-trial email (422 trial_restricted,
 * decisions.md "Sending"), and an email whose bodies are no longer stored (409 conflict).
 */
export function assertResendable(row: EmailRow): void {
  if (row.is_trial === 1) {
    throw new AppError('trial_restricted', 'The onboarding-trial email cannot be resent', { reason: 'trial_email' });
  }
  // Every accepted email has a body; none left means retention dropped them.
  if (row.html_body == null && row.text_body == null && row.raw_message == null) {
    throw new AppError('conflict', 'The body of this email is no longer stored, so it cannot be resent', {
      reason: 'body_not_stored',
    });
  }
}

const list = (v: unknown): string[] | null => (v == null ? null : (JSON.parse(v as string) as string[]));

/**
 * A new email with the stored one's content (addresses, subject, bodies, headers, tags,
 * attachments) and environment: a TEST email resends as TEST (SIMULATED). No API key sent
 * it: who did is in the audit log; `resent_from` and the first event name the original.
 */
export function copyEmail(row: EmailRow, attachments: Attachment[], now: number): NewEmail {
  const live = row.env === 'LIVE';
  return {
    id: newId(now),
    project_id: row.project_id,
    api_key_id: null,
    env: live ? 'LIVE' : 'TEST',
    source: row.source as NewEmail['source'],
    status: live ? 'QUEUED' : 'SIMULATED',
    from_email: row.from_email as string,
    from_name: (row.from_name as string | null) ?? null,
    to: list(row.to_emails) ?? [],
    cc: list(row.cc_emails),
    bcc: list(row.bcc_emails),
    reply_to: list(row.reply_to),
    subject: row.subject as string,
    tags: list(row.tags) ?? [],
    headers: JSON.parse(row.headers as string) as Record<string, string>,
    html: (row.html_body as string | null) ?? null,
    text: (row.text_body as string | null) ?? null,
    raw: (row.raw_message as Buffer | null) ?? null,
    template_id: (row.template_id as string | null) ?? null,
    template_version: (row.template_version as number | null) ?? null,
    created_at: iso(now),
    attachments,
    event: { id: newId(now), type: live ? 'queued' : 'simulated', data: { resent_from: row.id } },
    resent_from: row.id,
    metadata: row.metadata == null ? null : (JSON.parse(row.metadata as string) as Record<string, string>),
    // A message passed through goes again as written, its Message-ID with it: svc records that one.
    ...(row.raw_message ? { message_id: (row.message_id as string | null) ?? null } : {}),
    one_click_unsubscribe: row.one_click_unsubscribe == null ? null : row.one_click_unsubscribe === 1,
  };
}

/** The audit row of a resend: the new email, with whom it skipped, and the original's id. */
export function resendAudited(actor: Actor, atMs: number, e: NewEmail) {
  return (r: SendResponse): Audited => ({
    actor,
    atMs,
    entry: {
      action: 'email.resend',
      project_id: e.project_id,
      target_type: 'email',
      target_id: e.id,
      before: null,
      after: { ...r, resent_from: e.resent_from },
    },
  });
}
