import { iso, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { startPeriodic } from '../lib/periodic.ts';
import type { EmailsRepo } from './repo.ts';

/** Emails per batch: one short transaction each, so the accept path never waits long. */
const BATCH = 200;

export interface RetentionDeps {
  repo: Pick<EmailsRepo, 'dropContentBefore'>;
  clock: Clock;
  logger: Logger;
  /** Bodies and attachments of emails older than this are dropped (`--body-retention`). */
  retentionMs: number;
  /** Time between runs. */
  intervalMs: number;
}

/**
 * Drops the bodies and attachments of old emails in small batches (issue 16: the
 * metadata and events stay, so lists, stats and `svc emails show` still answer). The
 * position is kept in memory: after a restart the first run walks the already-emptied
 * rows once, by primary key.
 */
export function createRetention(deps: RetentionDeps) {
  let after = 0;
  /** One full pass: every batch until an email younger than the cutoff. */
  async function runOnce(signal?: AbortSignal): Promise<number> {
    const cutoff = iso(deps.clock.now() - deps.retentionMs);
    let total = 0;
    for (;;) {
      if (signal?.aborted) return total;
      const r = await deps.repo.dropContentBefore(cutoff, after, BATCH);
      total += r.dropped;
      after = r.next;
      if (r.done) return total;
      // Let requests in between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return {
    runOnce,
    /** Runs a pass at start and every intervalMs until stopped. */
    start: () =>
      startPeriodic(deps.clock, deps.intervalMs, (signal) =>
        runOnce(signal)
          .then((dropped) => {
            if (dropped) deps.logger.info({ dropped }, 'retention: bodies and attachments of old emails dropped');
          })
          .catch((err: unknown) => deps.logger.error({ err }, 'retention failed')),
      ),
  };
}
