import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { DomainsService } from './service.ts';

export interface DomainChecksDeps {
  service: Pick<DomainsService, 'verifyAll'>;
  clock: Clock;
  logger: Logger;
  /** Time between checks of every domain (--domain-check-interval). */
  intervalMs: number;
}

/**
 * Re-verifies every domain now and then every `intervalMs`, so records that
 * disappear are noticed and a domain published after `add` becomes verified on
 * its own. A run still going when the next is due is not doubled.
 */
export function startDomainChecks({ service, clock, logger, intervalMs }: DomainChecksDeps): { stop(): void } {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    void service
      .verifyAll()
      .then((r) => logger.debug(r, 'domain checks done'))
      .catch((e: unknown) => logger.error({ err: e }, 'domain checks failed'))
      .finally(() => (running = false));
  };
  const first = clock.setTimeout(tick, 0);
  const every = clock.setInterval(tick, intervalMs);
  return {
    stop() {
      first.cancel();
      every.cancel();
    },
  };
}
