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
