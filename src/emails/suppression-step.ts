// The suppression step of an accept, decided once for both stores (issue 30, item 3): each
// store only reads the reasons (SQLite address by address inside its transaction, PostgreSQL
// in one query) and hands them here.
import { AppError } from '../errors.ts';
import type { NewEmail, Recipient, SkippedRecipient } from './store.ts';

/**
 * Drops the recipients `reasonOf` names (it is asked with the lower-cased address) from the
 * recipients and from the email's to, cc and bcc, and says who was skipped and why. When none
 * is left the send is refused: all_recipients_suppressed, with the skipped list.
 */
export function dropSuppressed(
  e: NewEmail,
  recipients: Recipient[],
  reasonOf: (address: string) => string | undefined,
): { kept: Recipient[]; skipped: SkippedRecipient[] } {
  const skipped: SkippedRecipient[] = [];
  const kept = recipients.filter((r) => {
    const reason = reasonOf(r.address.toLowerCase());
    if (reason) skipped.push({ email: r.address, reason });
    return !reason;
  });
  if (kept.length === 0) {
    throw new AppError('all_recipients_suppressed', 'Every recipient is on the suppression list', {
      skipped_recipients: skipped,
    });
  }
  if (skipped.length > 0) {
    const dropped = new Set(skipped.map((s) => s.email.toLowerCase()));
    const keep = (list: string[] | null) => list && list.filter((a) => !dropped.has(a.toLowerCase()));
    Object.assign(e, { to: keep(e.to), cc: keep(e.cc), bcc: keep(e.bcc) });
  }
  return { kept, skipped };
}
