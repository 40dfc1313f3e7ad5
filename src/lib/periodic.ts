import { ioTimeout, type Clock, type Timer } from './clock.ts';

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

export interface Coalesced {
  /** Runs now, or once at the end of the gap when a run started less than `gapMs` ago. */
  call(): void;
  /** Drops a run waiting for the gap's end. */
  cancel(): void;
}

/**
 * `run` at most once per `gapMs`: the first call runs at once, and the calls during the gap
 * that follows make one run when it ends. A burst of events thus costs a few runs, while an
 * event after a quiet spell is served at once. The gap is a real timer, not the clock's: it
 * spaces out I/O, it does not schedule by the domain's time.
 */
export function coalesced(run: () => void, gapMs: number): Coalesced {
  let gap: Timer | undefined;
  let calledInGap = false;
  function call(): void {
    if (gap) {
      calledInGap = true;
      return;
    }
    gap = ioTimeout(() => {
      gap = undefined;
      if (calledInGap) {
        calledInGap = false;
        call();
      }
    }, gapMs);
    run();
  }
  return {
    call,
    cancel() {
      gap?.cancel();
      gap = undefined;
      calledInGap = false;
    },
  };
}
