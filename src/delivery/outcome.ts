import { classifyFailure, classifyReply, type Classification, type DecidingRule } from './classify.ts';
import type { ConnectionInfo, RecipientResult } from './job.ts';
import { nextAttemptAt } from './schedule.ts';

export interface RetryPolicy {
  schedule: readonly number[];
  maxAgeMs: number;
}

/** What happens to one recipient row after an attempt. */
export type Decision =
  | { kind: 'delivered'; reply: RecipientResult['reply'] }
  | {
      kind: 'bounced';
      bounce_type: 'hard' | 'soft';
      category: string;
      suppress: boolean;
      reply: RecipientResult['reply'];
      reason: string;
      /** Which rule of the classifier decided (issue 29, item 4). */
      rule: DecidingRule;
    }
  | {
      kind: 'retry';
      at: number;
      category: string;
      reason: string;
      reply: RecipientResult['reply'];
      rule: DecidingRule;
    }
  | { kind: 'failed'; reason: string; reply: null }
  /**
   * Not sent: the address joined the project's suppression list after a scheduled email was
   * accepted (decisions.md, "Scheduled sending"). The recipient ends CANCELED, as it would
   * have been dropped had it been listed at acceptance.
   */
  | { kind: 'suppressed'; suppression_reason: string; since: string; reply: null };

/**
 * Classifies one recipient's result; `senders` are our sender's addresses on that message
 * (envelope sender, From), so a reply naming one is read as about the sender.
 */
export function classify(r: RecipientResult, senders: readonly string[] = []): Classification {
  if (r.reply) return classifyReply(r.reply, { ...(r.stage === 'connect' ? {} : { stage: r.stage }), senders });
  return classifyFailure(r.failure ?? { kind: 'protocol', message: 'no reply and no failure reported' });
}

/**
 * The three outcomes of decisions.md for one recipient attempt: delivered; a
 * final bounce (hard and suppressed, or soft); or a retry per the schedule,
 * which turns into a soft bounce once the message is too old.
 */
export function decide(
  r: RecipientResult,
  attempts: number,
  createdAt: number,
  now: number,
  policy: RetryPolicy,
  senders: readonly string[] = [],
): Decision {
  const c = classify(r, senders);
  if (c.outcome === 'delivered') return { kind: 'delivered', reply: r.reply };
  const category = c.category ?? 'unknown';
  if (c.outcome === 'hard' || c.outcome === 'soft') {
    return {
      kind: 'bounced',
      bounce_type: c.outcome,
      category,
      suppress: c.suppress,
      reply: r.reply,
      reason: c.reason,
      rule: c.rule,
    };
  }
  const at = nextAttemptAt(attempts, createdAt, now, policy.schedule, policy.maxAgeMs);
  if (at === null) {
    return {
      kind: 'bounced',
      bounce_type: 'soft',
      category,
      suppress: false,
      reply: r.reply,
      reason: `gave up after ${attempts} attempts: ${c.reason}`,
      rule: c.rule,
    };
  }
  return { kind: 'retry', at, category, reason: c.reason, reply: r.reply, rule: c.rule };
}

/** Text kept on the recipient row to explain the last attempt. */
export function describeAttempt(r: RecipientResult, conn: ConnectionInfo | null): string {
  const where = conn ? ` (${conn.mx_host} ${conn.ip})` : '';
  if (r.reply) return `${r.reply.code}${r.reply.enhanced ? ' ' + r.reply.enhanced : ''} ${r.reply.text}${where}`.trim();
  return `${r.failure?.kind ?? 'error'}: ${r.failure?.message ?? 'unknown'}${where}`;
}
