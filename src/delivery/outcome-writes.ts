import { iso } from '../lib/clock.ts';
import { describeRule } from './classify.ts';
import type { ConnectionInfo } from './job.ts';
import type { Decision } from './outcome.ts';

/** One attempt's outcome for one recipient, as the engine hands it to the repository. */
export interface RecipientOutcome {
  recipient_id: number;
  address: string;
  attempts: number;
  decision: Decision;
  detail: string;
  /** The `delivery_delayed` notices given before this attempt (delayLevel's levels). */
  delay_notified: number;
  /** Since the recipient was first due (its email's schedule, or its acceptance). */
  waited_ms: number;
}

/**
 * How long a recipient has waited when svc says so again (issue 35, item 2; decisions.md,
 * "delivery_delayed"): its first deferral, then past 1 h, 4 h and 24 h.
 */
export const DELAY_THRESHOLDS_MS = [3_600_000, 4 * 3_600_000, 24 * 3_600_000] as const;
const DELAY_NAMES = ['first_deferral', '1h', '4h', '24h'] as const;

/** The level a deferral after `waitedMs` reaches: 1 the first, then one more per threshold passed. */
export function delayLevel(waitedMs: number): number {
  return 1 + DELAY_THRESHOLDS_MS.filter((t) => waitedMs >= t).length;
}

/** A recipient's columns as an outcome sets them. */
export interface OutcomeState {
  status: 'DELIVERED' | 'BOUNCED' | 'FAILED' | 'QUEUED' | 'CANCELED';
  next: string | null;
  bounce_type: string | null;
  category: string | null;
  /** describeRule()'s line for the rule that decided the category (issue 29, item 4). */
  rule: string | null;
  sent_at: string | null;
  delivered_at: string | null;
  /** The delay notices given, this one included. */
  delay_notified: number;
}

/**
 * What recording an outcome writes, the same on both stores (repo.ts, repo-pg.ts): the
 * recipient's new state, its events in order (the bytes of a webhook body come from them),
 * and whether it earns a hard-bounce suppression.
 *
 * Status, then events: every store transaction that changes an email's status writes the
 * new status before the events of that change. The webhook outbox's trigger takes the body's
 * `data.email.status` from the email row as each event is inserted, so an event tells the
 * status its own transaction leaves (a lone hard bounce: BOUNCED), on both stores
 * (decisions.md, "An event tells the status its change left").
 */
export function outcomeWrites(
  o: RecipientOutcome,
  conn: ConnectionInfo | null,
  at: string,
): { state: OutcomeState; events: [type: string, data: object][]; suppress: boolean } {
  const d = o.decision;
  const none = {
    bounce_type: null,
    category: null,
    rule: null,
    sent_at: null,
    delivered_at: null,
    delay_notified: o.delay_notified,
  };
  const events: [string, object][] = conn ? [['smtp_connected', { recipient: o.address, ...conn }]] : [];
  const mx_host = conn?.mx_host ?? null;
  switch (d.kind) {
    case 'delivered': {
      const reply = replyOf(d);
      events.push(['sent', { recipient: o.address, mx_host }]);
      events.push(['delivered', { recipient: o.address, ...reply, mx_host }]);
      return {
        state: { ...none, status: 'DELIVERED', next: null, sent_at: at, delivered_at: at },
        events,
        suppress: false,
      };
    }
    case 'bounced':
      events.push(['bounced', bouncedEvent(o.address, d, 'smtp')]);
      return {
        state: {
          ...none,
          status: 'BOUNCED',
          next: null,
          bounce_type: d.bounce_type,
          category: d.category,
          rule: describeRule(d.rule),
        },
        events,
        suppress: d.suppress,
      };
    case 'failed':
      events.push(['failed', { recipient: o.address, reason: d.reason }]);
      return { state: { ...none, status: 'FAILED', next: null }, events, suppress: false };
    case 'suppressed':
      events.push([
        'canceled',
        {
          recipient: o.address,
          reason: 'suppressed',
          suppression_reason: d.suppression_reason,
          suppressed_at: d.since,
        },
      ]);
      return { state: { ...none, status: 'CANCELED', next: null }, events, suppress: false };
    case 'retry': {
      // A deferral says so the first time, and again once past each threshold (delivery_delayed).
      const level = delayLevel(o.waited_ms);
      const notify = level > o.delay_notified;
      if (notify) {
        events.push([
          'delivery_delayed',
          {
            recipient: o.address,
            threshold: DELAY_NAMES[level - 1],
            waited_seconds: Math.floor(o.waited_ms / 1000),
            attempts: o.attempts,
            next_attempt_at: iso(d.at),
            category: d.category,
            reason: d.reason,
            ...replyOf(d),
          },
        ]);
      }
      return {
        state: {
          ...none,
          status: 'QUEUED',
          next: iso(d.at),
          category: d.category,
          rule: describeRule(d.rule),
          delay_notified: notify ? level : o.delay_notified,
        },
        events,
        suppress: false,
      };
    }
  }
}

/**
 * A bounce that arrived after the transaction (a DSN), as both stores write it: the reply,
 * the recipient's `last_error` (`source: …`), the rule that decided and the `bounced` event.
 */
export function lateBounceWrite(address: string, d: Extract<Decision, { kind: 'bounced' }>, source: string) {
  // A DSN's diagnostic already starts with its reply code; say it once.
  const said = d.reply?.text || (d.reply ? `${d.reply.code} ${d.reply.enhanced ?? ''}` : d.reason);
  const detail = `${source}: ${said}`.replace(/\s+/g, ' ').trim();
  const r = replyOf(d);
  return {
    reply: { code: r.smtp_code, enhanced: r.smtp_enhanced, text: r.smtp_text },
    detail,
    rule: describeRule(d.rule),
    event: bouncedEvent(address, d, source),
  };
}

function replyOf(d: Decision) {
  return {
    smtp_code: d.reply?.code ?? null,
    smtp_enhanced: d.reply?.enhanced ?? null,
    smtp_text: d.reply?.text ?? null,
  };
}

/** The `bounced` event's data, whether the bounce came in the transaction or in a DSN. */
function bouncedEvent(address: string, d: Extract<Decision, { kind: 'bounced' }>, source: string) {
  return {
    recipient: address,
    bounce_type: d.bounce_type,
    bounce_category: d.category,
    bounce_rule: describeRule(d.rule),
    ...replyOf(d),
    reason: d.reason,
    source,
  };
}
