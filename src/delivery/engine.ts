import { notOverlapping } from '../lib/periodic.ts';
import type { Timer } from '../lib/clock.ts';
import { sleep } from '../lib/sleep.ts';
import { release, renew, share, unclaim } from './engine-claim.ts';
import { createScheduler } from './engine-scheduler.ts';
import { createEngineState, drop, type EngineDeps, type EngineOptions } from './engine-state.ts';

export type { EngineDeps, EngineOptions, SigningKeys } from './engine-state.ts';
export { envelopesFor } from './engine-handoff.ts';

/** How often a node looks again at the other nodes' count and slow-downs. */
const SHARE_EVERY_MS = 2_000;

/**
 * The delivery scheduler: claims due recipients with a lease, hands one job
 * per (email, destination) to the worker pool, and records the results; the
 * main thread stays the single writer (architecture rule 6).
 *
 * Like Postfix's active queue, claiming runs ahead of sending: claimed
 * transactions wait in memory (`ready`) for a slot of their destination, so
 * a slot that frees up starts the next transaction at once instead of after a
 * query and a commit. A destination's slots bound its SMTP transactions only.
 *
 * The parts share one state (engine-state.ts): when to claim (engine-scheduler.ts),
 * claiming, leases and giving work back (engine-claim.ts), the hand-off to the workers
 * and the destinations' slots (engine-handoff.ts), and recording outcomes (engine-record.ts).
 */
export function createDeliveryEngine(deps: EngineDeps, opts: EngineOptions) {
  const { repo, clock, logger } = deps;
  const s = createEngineState(deps, opts);
  const scheduler = createScheduler(s);
  let renewal: Timer | undefined;
  let sharing: Timer | undefined;

  return {
    throttle: s.throttle,
    /** Voids leases of a dead process and starts claiming. */
    async start(): Promise<void> {
      const released = await repo.releaseStaleLeases();
      if (released)
        logger.warn({ recipients: released }, 'returned deliveries leased by a stopped process to the queue');
      scheduler.start();
      renewal = clock.setInterval(
        notOverlapping(() => renew(s)),
        Math.max(1, Math.floor(opts.leaseMs / 3)),
      );
      if (deps.liveNodes) {
        await share(s);
        sharing = clock.setInterval(
          notOverlapping(() => share(s)),
          SHARE_EVERY_MS,
        );
      }
      void scheduler.tick();
    },
    /** Claims now (in tests, after moving the clock). */
    poke: () => scheduler.tick(),
    /**
     * Told of an accepted LIVE email, once it is committed: delivery starts now rather than at
     * the next tick. Wakes coalesce: a burst of accepts makes one claim pass per WAKE_GAP_MS,
     * and one running pass picks up what the others accepted meanwhile. Ignored until started.
     */
    wake: () => scheduler.wake(),
    /** In-flight transactions, for tests and metrics. */
    inflightCount: () => s.inflight.size,
    /** Stops claiming, lets work in flight finish until the deadline, returns the rest to the queue. */
    async stop(deadlineMs = 10_000): Promise<void> {
      s.stopping = true;
      const landed = scheduler.stop();
      renewal?.cancel();
      sharing?.cancel();
      // A claim being committed lands first; then transactions that never started go back
      // at once, and those running get until the deadline.
      await landed;
      await Promise.all([...s.ready.keys()].map((domain) => unclaim(s, domain)));
      const until = performance.now() + deadlineMs;
      while (s.inflight.size && performance.now() < until) await sleep(20);
      const left = [...s.inflight];
      if (left.length) await release(s, left);
      for (const c of left) drop(s, c);
      await s.pool?.destroy();
    },
  };
}

export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;
