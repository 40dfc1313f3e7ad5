import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { startPeriodic } from '../lib/periodic.ts';
import type { DomainsService } from './service.ts';

export interface DomainChecksDeps {
  service: Pick<DomainsService, 'verifyAll'>;
  clock: Clock;
  logger: Logger;
  /** Time between checks of every domain (--domain-check-interval). */
  intervalMs: number;
}

export interface DomainChecks {
  /**
   * Stops the checks: no new run starts, a run in progress has its DNS lookups
   * cancelled and records nothing more, and the promise settles once it has
   * ended, so the store can be closed after it (a lookup to a slow resolver
   * kept `svc serve` alive for seconds after `stopped`, then failed on the
   * closed store).
   */
  stop(): Promise<void>;
}

/**
 * Re-verifies every domain now and then every `intervalMs`, so records that
 * disappear are noticed and a domain published after `add` becomes verified on
 * its own. A run still going when the next is due is not doubled.
 */
export function startDomainChecks({ service, clock, logger, intervalMs }: DomainChecksDeps): DomainChecks {
  return startPeriodic(clock, intervalMs, (signal) =>
    service
      .verifyAll(signal)
      .then((r) => logger.debug(r, 'domain checks done'))
      .catch((e: unknown) => logger.error({ err: e }, 'domain checks failed')),
  );
}
