import type { Clock } from './clock.ts';

export interface Periodic {
  /** No new run starts, the run in progress sees its signal aborted, and this settles once it has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `run` now and then every `intervalMs` on the injected clock; a run still going
 * when the next is due is not doubled. `run` handles its own errors.
 */
export function startPeriodic(clock: Clock, intervalMs: number, run: (signal: AbortSignal) => Promise<void>): Periodic {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running || stopping.signal.aborted) return;
    running = run(stopping.signal).finally(() => (running = undefined));
  };
  const first = clock.setTimeout(tick, 0);
  const every = clock.setInterval(tick, intervalMs);
  return {
    async stop() {
      first.cancel();
      every.cancel();
      stopping.abort();
      await running;
    },
  };
}

/**
 * `run` as a timer's callback that never overlaps itself: a call while the last run is still
 * going is dropped. Runs that pile up (a store that answers slower than the period, or a test
 * clock moved by years) would otherwise take a connection each until the pool is exhausted.
 */
export function notOverlapping(run: () => Promise<unknown>): () => void {
  let running = false;
  return () => {
    if (running) return;
    running = true;
    void run().finally(() => (running = false));
  };
}
