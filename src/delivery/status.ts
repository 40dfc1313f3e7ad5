/** A recipient row as the email's status needs it. */
export interface RecipientState {
  status: string;
  bounce_type: string | null;
  bounce_category: string | null;
  bounce_rule: string | null;
  smtp_code: number | null;
  smtp_enhanced: string | null;
  smtp_text: string | null;
  sent_at: string | null;
  delivered_at: string | null;
  updated_at: string;
}

export interface EmailSummary {
  status: string;
  sent_at: string | null;
  delivered_at: string | null;
  failed_at: string | null;
  bounce_type: string | null;
  bounce_category: string | null;
  /** The first bounce's deciding rule, as its bounce_category (issue 29, item 4). */
  bounce_rule: string | null;
  final_smtp_code: number | null;
  final_smtp_enhanced: string | null;
  final_smtp_text: string | null;
}

const PENDING = new Set(['QUEUED', 'SENDING']);

/**
 * The email's status from its recipient rows (decisions.md, "Email lifecycle"):
 * SENDING while any recipient is still being tried; DELIVERED when all were;
 * COMPLAINED when all were delivered and one complained; BOUNCED when all are final
 * and one bounced (the first bounce describes it);
 * FAILED for an internal failure. Returns null while nothing has been tried.
 */
export function summarize(rows: RecipientState[], now: string): EmailSummary | null {
  if (rows.length === 0) return null;
  const sent =
    rows
      .map((r) => r.sent_at)
      .filter((x): x is string => x !== null)
      .sort()[0] ?? null;
  const bounce = rows.find((r) => r.status === 'BOUNCED');
  const lastDelivered = rows.filter((r) => r.status === 'DELIVERED').at(-1);
  const describe = bounce ?? lastDelivered;
  const base: EmailSummary = {
    status: 'SENDING',
    sent_at: sent,
    delivered_at: null,
    failed_at: null,
    bounce_type: bounce?.bounce_type ?? null,
    bounce_category: bounce?.bounce_category ?? null,
    bounce_rule: bounce?.bounce_rule ?? null,
    final_smtp_code: describe?.smtp_code ?? null,
    final_smtp_enhanced: describe?.smtp_enhanced ?? null,
    final_smtp_text: describe?.smtp_text ?? null,
  };
  if (rows.some((r) => PENDING.has(r.status))) return base;
  // A recipient of a scheduled email whose address joined the suppression list before it went
  // out is CANCELED (outcome.ts, 'suppressed'): the email is what its other recipients made it,
  // and CANCELED when none was sent to.
  const sent_to = rows.filter((r) => r.status !== 'CANCELED');
  if (sent_to.length === 0) return { ...base, status: 'CANCELED', failed_at: null };
  // A complaint comes about a delivered message: the email stays delivered, and says COMPLAINED.
  if (sent_to.every((r) => r.status === 'DELIVERED' || r.status === 'COMPLAINED')) {
    const last = sent_to
      .map((r) => r.delivered_at ?? now)
      .sort()
      .at(-1)!;
    const complained = sent_to.some((r) => r.status === 'COMPLAINED');
    return { ...base, status: complained ? 'COMPLAINED' : 'DELIVERED', delivered_at: last };
  }
  return { ...base, status: bounce ? 'BOUNCED' : 'FAILED', failed_at: now };
}
