import { iso, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { startPeriodic } from '../lib/periodic.ts';
import type { EmailsStore, RetentionPage } from './store.ts';

/** Emails (or webhook attempt records) per batch: one short transaction each, so the accept path never waits long. */
const BATCH = 200;

export interface RetentionDeps {
  repo: Pick<EmailsStore, 'dropContentBefore' | 'deleteBefore'>;
  webhooks: { deleteDeliveriesBefore(cutoff: string, afterSeq: number, limit: number): Promise<Walk> };
  /** Received messages (issue 34): all content, so they go with the bodies (`--body-retention`). */
  received?: { deleteReceivedBefore(cutoff: string, limit: number): Promise<number> };
  clock: Clock;
  logger: Logger;
  /** Bodies and attachments of emails older than this are dropped (`--body-retention`). */
  bodyRetentionMs: number;
  /** Final emails older than this are deleted, and webhook attempt records (`--email-retention`); 0 = never. */
  emailRetentionMs: number;
  /**
   * Runs a pass unless another node runs one now (PostgreSQL's advisory lock): several
   * nodes' passes would walk the same rows. Without it, every pass runs.
   */
  exclusive?: (pass: () => Promise<void>) => Promise<boolean>;
}

interface Walk {
  changed: number;
  next: number;
  done: boolean;
}

/** Between runs: a quarter of the shorter retention, at least a minute and at most an hour. */
export const retentionInterval = (d: Pick<RetentionDeps, 'bodyRetentionMs' | 'emailRetentionMs'>) =>
  Math.min(3_600_000, Math.max(60_000, Math.min(d.bodyRetentionMs, d.emailRetentionMs || Infinity) / 4));

/**
 * Retention (issue 16): drops the bodies and attachments of old emails, then deletes
 * emails older than the email retention, in small batches. Each walk keeps its position
 * in memory (after a restart the first run walks the rows again once, by primary key)
 * and the emails it passed while they were still being delivered, to look at them again.
 */
export function createRetention(deps: RetentionDeps) {
  const bodies = { after: 0, held: [] as number[] };
  const emails = { after: 0, held: [] as number[] };
  let deliveriesAfter = 0;

  /** Batches of one walk until it reaches the cutoff; returns what changed. */
  async function walk(step: () => Promise<Walk>, signal?: AbortSignal): Promise<number> {
    let total = 0;
    for (;;) {
      if (signal?.aborted) return total;
      const r = await step();
      total += r.changed;
      if (r.done) return total;
      // Let requests in between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  /**
   * The steps of one walk of `page`: the emails held back by the previous pass are looked
   * at again in the first batch; those still being delivered are held for the next pass.
   */
  function paged(
    page: Pick<RetentionPage, 'after' | 'held'>,
    batch: EmailsStore['deleteBefore'],
    cutoff: string,
  ): () => Promise<Walk> {
    let retry = page.held;
    page.held = [];
    return async () => {
      const r = await batch(cutoff, { after: page.after, held: retry, limit: BATCH });
      retry = [];
      page.after = r.next;
      page.held.push(...r.held);
      return r;
    };
  }

  /** One full pass: bodies and received messages, then emails, then webhook attempt records. */
  async function runOnce(
    signal?: AbortSignal,
  ): Promise<{ bodies: number; emails: number; deliveries: number; received: number }> {
    const now = deps.clock.now();
    const bodyCutoff = iso(now - deps.bodyRetentionMs);
    const result = { bodies: 0, emails: 0, deliveries: 0, received: 0 };
    result.bodies = await walk(paged(bodies, deps.repo.dropContentBefore, bodyCutoff), signal);
    const received = deps.received;
    if (received) {
      result.received = await walk(async () => {
        const changed = await received.deleteReceivedBefore(bodyCutoff, BATCH);
        return { changed, next: 0, done: changed < BATCH };
      }, signal);
    }
    if (deps.emailRetentionMs > 0) {
      const cutoff = iso(now - deps.emailRetentionMs);
      result.emails = await walk(paged(emails, deps.repo.deleteBefore, cutoff), signal);
      result.deliveries = await walk(async () => {
        const r = await deps.webhooks.deleteDeliveriesBefore(cutoff, deliveriesAfter, BATCH);
        deliveriesAfter = r.next;
        return r;
      }, signal);
    }
    return result;
  }
  return {
    runOnce,
    /** Runs a pass at start and then every retentionInterval until stopped. */
    start: () =>
      startPeriodic(deps.clock, retentionInterval(deps), (signal) => {
        const pass = () =>
          runOnce(signal).then((r) => {
            if (r.bodies || r.emails || r.deliveries || r.received)
              deps.logger.info(r, 'retention: old bodies and emails removed');
          });
        return (deps.exclusive ? deps.exclusive(pass) : pass())
          .then(() => undefined)
          .catch((err: unknown) => deps.logger.error({ err }, 'retention failed'));
      }),
  };
}
