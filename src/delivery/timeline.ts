// One email's delivery, recipient by recipient, as the dashboard's email view shows it (issue 31,
// item 3): every attempt read back from the email's events, and where each recipient stands now
// from its row (explain). Pure: the route hands it what the stores returned.
import { z } from 'zod';
import type { QueueRecipient } from './store.ts';

const dt = z.iso.datetime();

export const attemptSchema = z.object({
  /** 1 for the first attempt. */
  attempt: z.number().int(),
  /** When it was claimed (began). */
  at: dt,
  /** When its outcome was recorded; null while it runs, and for a retry that reached no server. */
  ended_at: dt.nullable(),
  /** The MX host it reached; null when it reached none (or not yet). */
  mx_host: z.string().nullable(),
  /** `retry`: deferred (a 4xx, a timeout), tried again later; `sending`: under way. */
  outcome: z.enum(['sending', 'retry', 'delivered', 'bounced', 'failed']),
  /** The reply, or the failure, in one line; null while it runs. */
  reply: z.string().nullable(),
});

export const recipientTimelineSchema = z.object({
  address: z.string(),
  kind: z.enum(['to', 'cc', 'bcc']),
  status: z.string(),
  domain: z.string(),
  attempts: z.array(attemptSchema),
  mx_host: z.string().nullable(),
  smtp_code: z.number().int().nullable(),
  smtp_enhanced: z.string().nullable(),
  smtp_text: z.string().nullable(),
  bounce_type: z.string().nullable(),
  bounce_category: z.string().nullable(),
  /** The classifier rule that decided its bounce or its retry, in one line. */
  bounce_rule: z.string().nullable(),
  sent_at: dt.nullable(),
  delivered_at: dt.nullable(),
  /** Set while it waits for an attempt or one is under way. */
  next_attempt_at: dt.nullable(),
  /** Why it waits, one reason a line; empty once final. */
  waiting: z.array(z.string()),
  /** Its destination's slow-down, while one holds (421, "too many connections"). */
  throttle: z.object({ concurrency: z.number().int(), paused_until: dt.nullable(), reason: z.string() }).nullable(),
});

export type Attempt = z.infer<typeof attemptSchema>;
export type RecipientTimeline = z.infer<typeof recipientTimelineSchema>;

/** An event as the API presents it (GET /v1/emails/{id}/events). */
export interface TimelineEvent {
  type: string;
  data: Record<string, unknown>;
  timestamp: string;
}

const FINAL = new Set(['delivered', 'bounced', 'failed']);
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The reply a final event carries, in one line (`550 5.1.1 User unknown`), or its reason. */
function replyLine(data: Record<string, unknown>): string | null {
  const reply = [data.smtp_code, data.smtp_enhanced, data.smtp_text]
    .filter((x) => typeof x === 'number' || (typeof x === 'string' && x !== ''))
    .join(' ');
  return reply || text(data.reason);
}

/**
 * The attempts of one recipient from the email's events, oldest first. A `sending` event opens
 * an attempt and says how the one before ended (`previous_attempt`): a retry writes no event of
 * its own. A claim put back unused (shutdown, a paused destination) is followed by a `sending`
 * of the same number, which replaces it. A report after delivery (a DSN) is not an attempt.
 */
export function attemptsOf(q: QueueRecipient, events: readonly TimelineEvent[]): Attempt[] {
  const address = q.address.toLowerCase();
  const out: Attempt[] = [];
  for (const e of events) {
    if (text(e.data.recipient)?.toLowerCase() !== address) continue;
    const last = out.at(-1);
    if (e.type === 'sending') {
      if (last?.outcome === 'sending') {
        last.outcome = 'retry';
        last.reply = text(e.data.previous_attempt);
      }
      const attempt = typeof e.data.attempt === 'number' ? e.data.attempt : out.length + 1;
      if (last?.attempt === attempt) out.pop();
      out.push({ attempt, at: e.timestamp, ended_at: null, mx_host: null, outcome: 'sending', reply: null });
    } else if (last?.outcome === 'sending' && e.type === 'smtp_connected') {
      last.mx_host = text(e.data.mx_host);
      last.ended_at = e.timestamp;
    } else if (last?.outcome === 'sending' && FINAL.has(e.type)) {
      last.outcome = e.type as Attempt['outcome'];
      last.reply = replyLine(e.data);
      last.mx_host ??= text(e.data.mx_host);
      last.ended_at = e.timestamp;
    }
  }
  // The last attempt of a recipient back in the queue was deferred: its row holds the reply.
  const last = out.at(-1);
  if (last?.outcome === 'sending' && q.status !== 'SENDING') {
    last.outcome = 'retry';
    last.reply = q.last_error;
  }
  return out;
}

/** Why a recipient waits, one reason a line: its last deferral with the rule, its destination's throttle. */
export function waitingReasons(q: QueueRecipient): string[] {
  const reasons: string[] = [];
  if (q.status === 'SENDING') reasons.push('an attempt is under way');
  else if (q.status !== 'QUEUED') return [];
  else if (q.attempts === 0) reasons.push('waiting for its first attempt');
  else {
    const why = q.bounce_category ? ` (${q.bounce_category}, decided by ${q.bounce_rule ?? 'the classifier'})` : '';
    reasons.push(
      `attempt ${q.attempts} was deferred${why}: ${q.last_error ?? 'no reply'}; tried again on the retry schedule`,
    );
  }
  if (q.throttle_concurrency !== null) {
    const until = q.throttle_paused_until ? `, paused until ${q.throttle_paused_until}` : '';
    reasons.push(
      `${q.domain} is throttled: at most ${q.throttle_concurrency} connections at once${until}, after "${q.throttle_reason ?? ''}"`,
    );
  }
  return reasons;
}

/** Each recipient of an email (explain's rows) with its attempts and why it waits. */
export function recipientTimelines(queue: readonly QueueRecipient[], events: readonly TimelineEvent[]) {
  return queue.map((q): RecipientTimeline => ({
    address: q.address,
    kind: q.kind,
    status: q.status,
    domain: q.domain,
    attempts: attemptsOf(q, events),
    mx_host: q.mx_host,
    smtp_code: q.smtp_code,
    smtp_enhanced: q.smtp_enhanced,
    smtp_text: q.smtp_text,
    bounce_type: q.bounce_type,
    bounce_category: q.bounce_category,
    bounce_rule: q.bounce_rule,
    sent_at: q.sent_at,
    delivered_at: q.delivered_at,
    next_attempt_at: q.status === 'QUEUED' || q.status === 'SENDING' ? q.next_attempt_at : null,
    waiting: waitingReasons(q),
    throttle:
      q.throttle_concurrency === null
        ? null
        : {
            concurrency: q.throttle_concurrency,
            paused_until: q.throttle_paused_until,
            reason: q.throttle_reason ?? '',
          },
  }));
}
