import { performance } from 'node:perf_hooks';

// Samples on real time, not the domain clock: it measures this thread, like the committer's window.

/**
 * How busy a thread's event loop is, shared with other threads: the owner samples its
 * event-loop utilization every `everyMs` into a SharedArrayBuffer, and any thread
 * holding the buffer reads the last sample without a message. The webhook dispatcher
 * reads the main thread's, to let the accept go first (decisions.md, "Webhooks").
 */
export function createBusySignal(everyMs = 100) {
  const buffer = new SharedArrayBuffer(4);
  const cell = new Int32Array(buffer);
  let last = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout | undefined;
  return {
    buffer,
    start(): void {
      timer ??= setInterval(() => {
        const now = performance.eventLoopUtilization();
        // Per mille of the last interval that the loop spent running rather than waiting.
        Atomics.store(cell, 0, Math.round(performance.eventLoopUtilization(now, last).utilization * 1000));
        last = now;
      }, everyMs).unref();
    },
    stop(): void {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** True while the owner's last sample was at least `threshold` (0–1) busy. */
export function readBusySignal(buffer: SharedArrayBuffer, threshold: number): () => boolean {
  const cell = new Int32Array(buffer);
  const limit = Math.round(threshold * 1000);
  return () => Atomics.load(cell, 0) >= limit;
}
