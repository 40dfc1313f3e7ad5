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
  /**
   * Runs a pass unless another node runs one now (Store.runExclusive): on several nodes, one
   * checks the domains and the others skip that turn, rather than each querying DNS and
   * writing the same transitions. Without it, every pass runs.
   */
  exclusive?: (run: () => Promise<void>) => Promise<boolean>;
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
export function startDomainChecks(deps: DomainChecksDeps): DomainChecks {
  const { service, clock, logger, intervalMs } = deps;
  const exclusive = deps.exclusive ?? (async (run) => (await run(), true));
  return startPeriodic(clock, intervalMs, (signal) =>
    exclusive(async () => logger.debug(await service.verifyAll(signal), 'domain checks done'))
      .then((ran) => {
        if (!ran) logger.debug('domain checks skipped: another node runs them');
      })
      .catch((e: unknown) => logger.error({ err: e }, 'domain checks failed')),
  );
}
