import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createBusySignal } from '../lib/busy-signal.ts';
import type { Logger } from '../lib/logger.ts';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import type { DispatcherStats } from './dispatcher.ts';
import type { DispatchWorkerData } from './dispatch-worker.ts';
import type { WebhooksStore } from './store.ts';

/** The bundle has dispatch-worker.js beside main.js; tests and tsx run the .ts. */
function workerFile(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`./dispatch-worker.${ext}`, import.meta.url));
}

/**
 * The dispatcher of `svc serve`, run in a worker thread (dispatch-worker.ts); the
 * main thread keeps only its counters (for /metrics and `svc top`).
 */
// Its timers (looking for the first webhook, restarting a thread) run on real time, not the
// domain clock: they manage a thread, and tests set their periods through `opts`.
export function createDispatchWorker(
  data: Omit<DispatchWorkerData, 'mainBusy'>,
  deps: { repo: WebhooksStore; logger: Logger },
  opts: { restartMs?: number; lookEveryMs?: number } = {},
) {
  // How busy this (the accepting) thread is, read by the dispatcher thread.
  const mainBusy = createBusySignal();
  const zero = (): DispatcherStats => ({ attempts: { succeeded: 0, failed: 0, refused: 0 }, autoDisabled: 0 });
  const stats = zero();
  /** Counters of the threads that ended (a restarted thread counts from 0 again). */
  const before = zero();
  const firstRestartMs = opts.restartMs ?? 1000;
  let restartMs = firstRestartMs;
  let restartTimer: NodeJS.Timeout | undefined;
  let waitingTimer: NodeJS.Timeout | undefined;
  let stopping = false;
  let worker: Worker | undefined;
  let stopped: Promise<void> | undefined;
  /** Resolves when the current thread has ended, however it ended. */
  let ended: Promise<void> = Promise.resolve();

  function add(into: DispatcherStats, a: DispatcherStats, b: DispatcherStats): void {
    into.attempts.succeeded = a.attempts.succeeded + b.attempts.succeeded;
    into.attempts.failed = a.attempts.failed + b.attempts.failed;
    into.attempts.refused = a.attempts.refused + b.attempts.refused;
    into.autoDisabled = a.autoDisabled + b.autoDisabled;
  }

  function launch(): void {
    const workerData: DispatchWorkerData = { ...data, mainBusy: mainBusy.buffer };
    const w = new Worker(workerFile(), {
      workerData,
      name: 'svc-webhooks',
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    worker = w;
    let last = zero();
    ended = new Promise<void>((done) =>
      w.once('exit', (code) => {
        add(before, before, last);
        done();
        if (stopping) return;
        // A thread that ended on its own (a bug, or the database failing under it) is started
        // again, waiting longer each time it ends again soon, so webhooks never stop for good.
        deps.logger.error(
          { exit_code: code, restart_in_ms: restartMs },
          'the webhook dispatcher thread ended; starting it again',
        );
        restartTimer = setTimeout(launch, restartMs);
        restartMs = Math.min(restartMs * 2, 60_000);
      }),
    );
    w.on('message', (m: { type: string; stats?: DispatcherStats }) => {
      if (m.type !== 'stats' || !m.stats) return;
      last = m.stats;
      add(stats, before, last);
      // It has run a second: the next failure starts from the first wait again.
      restartMs = firstRestartMs;
    });
    w.on('error', (err) => deps.logger.error({ err }, 'the webhook dispatcher thread failed'));
  }

  return {
    stats,
    /**
     * Starts the thread once the first webhook exists (looked for now and every second):
     * a server that sends no webhooks does not pay a thread and its heap (~45 MB of RSS).
     */
    start(): Promise<void> {
      const launchWhenNeeded = async () => {
        if (stopping || worker || !(await deps.repo.anyWebhook())) return;
        // Looked at again after the read: a stop or an earlier look may have come meanwhile.
        if (stopping || worker) return;
        clearInterval(waiting);
        mainBusy.start();
        launch();
      };
      const look = () =>
        void launchWhenNeeded().catch((err: unknown) => deps.logger.error({ err }, 'looking for webhooks failed'));
      const waiting = setInterval(look, opts.lookEveryMs ?? 1000).unref();
      waitingTimer = waiting;
      look();
      return Promise.resolve();
    },
    /** Asks the thread to finish its attempts in flight (each at most 10 s) and waits for it. */
    stop(): Promise<void> {
      stopping = true;
      clearTimeout(restartTimer);
      clearInterval(waitingTimer);
      const w = worker;
      if (!w) return Promise.resolve();
      mainBusy.stop();
      stopped ??= new Promise<void>((done) => {
        w.on('message', (m: { type: string }) => {
          if (m.type === 'stopped') void w.terminate().then(() => done());
        });
        // A thread that already ended (it failed at start) answers nothing: its end is enough.
        void ended.then(() => done());
        w.postMessage('stop');
      });
      return stopped;
    },
    runOnce(): Promise<void> {
      return Promise.reject(new Error('the threaded dispatcher runs on its own'));
    },
    pending: () => deps.repo.pendingCount(),
    autoDisabled: () => deps.repo.autoDisabledCount(),
  };
}
