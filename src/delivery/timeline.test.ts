import { describe, expect, it } from 'vitest';
import type { QueueRecipient } from './store.ts';
import { attemptsOf, recipientTimelines, waitingReasons, type TimelineEvent } from './timeline.ts';

const row = (over: Partial<QueueRecipient> = {}): QueueRecipient => ({
  address: 'Ann@dest.test',
  kind: 'to',
  status: 'QUEUED',
  attempts: 0,
  next_attempt_at: '2026-11-28T10:00:00.000Z',
  last_attempt_at: null,
  last_error: null,
  domain: 'dest.test',
  mx_host: null,
  smtp_code: null,
  smtp_enhanced: null,
  smtp_text: null,
  bounce_type: null,
  bounce_category: null,
  bounce_rule: null,
  sent_at: null,
  delivered_at: null,
  throttle_concurrency: null,
  throttle_paused_until: null,
  throttle_reason: null,
  sts_mode: null,
  sts_policy_id: null,
  sts_expires_at: null,
  ...over,
});
const t = (minute: number) => `2026-11-28T10:${String(minute).padStart(2, '0')}:00.000Z`;
const ev = (minute: number, type: string, data: Record<string, unknown>): TimelineEvent => ({
  type,
  data: { recipient: 'ann@dest.test', ...data },
  timestamp: t(minute),
});
const GREY = '451 4.7.1 Greylisted, try again (mx.dest.test 127.0.0.1)';

describe('attemptsOf', () => {
  it('reads each attempt from the events: the retry from the next claim, the bounce from its event', () => {
    const events = [
      ev(0, 'queued', {}),
      ev(0, 'sending', { attempt: 1 }),
      ev(0, 'smtp_connected', { mx_host: 'mx.dest.test' }),
      ev(1, 'sending', { attempt: 2, previous_attempt: GREY }),
      ev(1, 'smtp_connected', { mx_host: 'mx2.dest.test' }),
      ev(1, 'bounced', { smtp_code: 550, smtp_enhanced: '5.1.1', smtp_text: 'User unknown', bounce_rule: 'r' }),
      // Another recipient's attempt is not hers.
      { type: 'sending', data: { recipient: 'bob@dest.test', attempt: 1 }, timestamp: t(2) },
    ];
    expect(attemptsOf(row({ status: 'BOUNCED', attempts: 2 }), events)).toEqual([
      { attempt: 1, at: t(0), ended_at: t(0), mx_host: 'mx.dest.test', outcome: 'retry', reply: GREY },
      {
        attempt: 2,
        at: t(1),
        ended_at: t(1),
        mx_host: 'mx2.dest.test',
        outcome: 'bounced',
        reply: '550 5.1.1 User unknown',
      },
    ]);
  });

  it("takes a waiting recipient's last reply from its row, and drops a claim put back unused", () => {
    const events = [ev(0, 'sending', { attempt: 1 }), ev(5, 'sending', { attempt: 1 })];
    expect(attemptsOf(row({ attempts: 1, last_error: GREY }), events)).toEqual([
      { attempt: 1, at: t(5), ended_at: null, mx_host: null, outcome: 'retry', reply: GREY },
    ]);
    expect(attemptsOf(row({ status: 'SENDING', attempts: 1 }), events)).toMatchObject([{ outcome: 'sending' }]);
  });

  it('a failure before any reply gives its reason; a DSN after delivery is no attempt', () => {
    const failed = [ev(0, 'sending', { attempt: 1 }), ev(0, 'failed', { reason: 'no MX for dest.test' })];
    expect(attemptsOf(row({ status: 'FAILED' }), failed)).toMatchObject([
      { outcome: 'failed', reply: 'no MX for dest.test', mx_host: null },
    ]);
    const late = [
      ev(0, 'sending', { attempt: 1 }),
      ev(0, 'delivered', { smtp_code: 250, smtp_enhanced: null, smtp_text: 'ok', mx_host: 'mx.dest.test' }),
      ev(9, 'bounced', { smtp_code: 550, source: 'dsn' }),
    ];
    expect(attemptsOf(row({ status: 'BOUNCED' }), late)).toEqual([
      { attempt: 1, at: t(0), ended_at: t(0), mx_host: 'mx.dest.test', outcome: 'delivered', reply: '250 ok' },
    ]);
  });
});

describe('waitingReasons', () => {
  it('says why a deferred recipient waits, with the rule that decided, and its throttled destination', () => {
    const q = row({
      attempts: 1,
      last_error: '421 4.7.0 Too many connections',
      bounce_category: 'rate-limited',
      bounce_rule: 'the reply\'s words "Too many connections"',
      throttle_concurrency: 2,
      throttle_paused_until: t(3),
      throttle_reason: '421 4.7.0 Too many connections',
    });
    expect(waitingReasons(q)).toEqual([
      'attempt 1 was deferred (rate-limited, decided by the reply\'s words "Too many connections"): 421 4.7.0 Too many connections; tried again on the retry schedule',
      `dest.test is throttled: at most 2 connections at once, paused until ${t(3)}, after "421 4.7.0 Too many connections"`,
    ]);
    expect(waitingReasons(row())).toEqual(['waiting for its first attempt']);
    expect(waitingReasons(row({ status: 'SENDING', attempts: 1 }))).toEqual(['an attempt is under way']);
    expect(waitingReasons(row({ status: 'DELIVERED', throttle_concurrency: 2 }))).toEqual([]);
  });
});

describe('recipientTimelines', () => {
  it('gives a final recipient no next attempt, and its throttle as an object', () => {
    const [r] = recipientTimelines(
      [row({ status: 'DELIVERED', throttle_concurrency: 3, throttle_reason: '421 slow' })],
      [],
    );
    expect(r).toMatchObject({
      status: 'DELIVERED',
      next_attempt_at: null,
      waiting: [],
      throttle: { concurrency: 3, paused_until: null, reason: '421 slow' },
    });
  });
});
