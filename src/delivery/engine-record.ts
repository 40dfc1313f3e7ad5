import { classify, decide, describeAttempt } from './outcome.ts';
import type { DeliveryJob, JobResult } from './job.ts';
import type { DueRow, RecipientOutcome } from './repo.ts';
import { spfFields } from './spf-verdict.ts';
import { unclaim } from './engine-claim.ts';
import type { Claimed, EngineState } from './engine-state.ts';

type Sender = Pick<DeliveryJob, 'envelope_from' | 'from_email'>;

/** One recipient's outcome of a transaction: its reply decided against the retry policy. */
function outcomeOf(
  s: EngineState,
  row: DueRow,
  result: JobResult,
  createdAt: number,
  now: number,
  job: Sender,
): RecipientOutcome {
  const attempts = row.attempts + 1;
  if (result.internal_error) {
    return {
      recipient_id: row.id,
      address: row.address,
      attempts,
      decision: { kind: 'failed', reason: result.internal_error, reply: null },
      detail: result.internal_error,
      delay_notified: row.delay_notified,
      waited_ms: now - createdAt,
    };
  }
  const r = result.results.find((x) => x.recipient === row.address) ?? {
    recipient: row.address,
    stage: 'connect' as const,
    reply: null,
    failure: { kind: 'protocol' as const, message: 'no result for this recipient' },
  };
  return {
    recipient_id: row.id,
    address: row.address,
    attempts,
    decision: decide(r, attempts, createdAt, now, s.opts.policy, [job.envelope_from, job.from_email]),
    detail: describeAttempt(r, result.connection),
    delay_notified: row.delay_notified,
    waited_ms: now - createdAt,
  };
}

/**
 * Records a transaction's outcome under its claim's lease: each recipient's decision, the
 * SPF verdict for the address it left from, and the destination's throttle adapted to the
 * reply (before the first await, so a 421 pauses the destination at once).
 */
export async function record(s: EngineState, c: Claimed, result: JobResult, job: Sender): Promise<void> {
  const { j, rows } = c;
  const now = s.deps.clock.now();
  const outcomes = rows.map((row) => outcomeOf(s, row, result, j.createdAt, now, job));
  adapt(s, rows[0]!.domain, result, now);
  const ip = result.connection?.local_ip;
  const spf = ip ? spfFields(await s.evaluateSpf(job.envelope_from, ip), job.envelope_from, job.from_email) : null;
  await s.deps.repo.record(j.seq, j.projectId, result.email_id, result.connection, outcomes, now, c.lease, spf);
  s.deps.observe?.(outcomes.map((o) => o.decision));
  if (result.tls?.length) s.deps.observeTls?.(result.tls);
}

/** 421 or 4.7.x "slow down" cuts the destination's rate; deliveries win it back. Changes are persisted. */
function adapt(s: EngineState, domain: string, result: JobResult, now: number): void {
  const { throttle, deps } = s;
  const slow = result.results.find((r) => r.reply && (r.reply.code === 421 || classify(r).category === 'rate-limited'));
  if (slow?.reply) {
    throttle.slowDown(domain, now);
    void unclaim(s, domain);
    const d = throttle.describe(domain, now);
    s.throttled.add(domain);
    const reason = `${slow.reply.code} ${slow.reply.enhanced ?? ''} ${slow.reply.text}`.replace(/\s+/g, ' ').trim();
    void deps.repo.saveThrottle(domain, { concurrency: d.concurrency, paused_until: d.paused_until, reason }, now);
  } else if (result.results.some((r) => r.reply && r.reply.code < 300)) {
    throttle.succeeded(domain);
    if (s.throttled.has(domain) && !throttle.describe(domain, now).throttled) {
      s.throttled.delete(domain);
      void deps.repo.saveThrottle(domain, null, now);
    }
  }
}
