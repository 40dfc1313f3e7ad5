import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createBusySignal } from '../lib/busy-signal.ts';
import type { Logger } from '../lib/logger.ts';
import type { DispatcherStats } from './dispatcher.ts';
import type { DispatchWorkerData } from './dispatch-worker.ts';
import type { WebhooksRepo } from './repo.ts';

/** The bundle has dispatch-worker.js beside main.js; tests and tsx run the .ts. */
function workerFile(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`./dispatch-worker.${ext}`, import.meta.url));
}

/**
 * The dispatcher of `svc serve`, run in a worker thread (dispatch-worker.ts); the
 * main thread keeps only its counters (for /metrics and `svc top`).
 */
export function createDispatchWorker(
  data: Omit<DispatchWorkerData, 'mainBusy'>,
  deps: { repo: WebhooksRepo; logger: Logger },
) {
  // How busy this (the accepting) thread is, read by the dispatcher thread.
  const mainBusy = createBusySignal();
  const stats: DispatcherStats = { attempts: { succeeded: 0, failed: 0, refused: 0 }, autoDisabled: 0 };
  let worker: Worker | undefined;
  let stopped: Promise<void> | undefined;
  /** Resolves when the thread has ended, however it ended. */
  let ended: Promise<void> = Promise.resolve();
  return {
    stats,
    start(): Promise<void> {
      mainBusy.start();
      const workerData: DispatchWorkerData = { ...data, mainBusy: mainBusy.buffer };
      worker = new Worker(workerFile(), { workerData, name: 'svc-webhooks' });
      const w = worker;
      ended = new Promise<void>((done) => w.once('exit', () => done()));
      worker.on('message', (m: { type: string; stats?: DispatcherStats }) => {
        if (m.type === 'stats' && m.stats) Object.assign(stats, m.stats);
      });
      worker.on('error', (err) => deps.logger.error({ err }, 'the webhook dispatcher thread failed'));
      return Promise.resolve();
    },
    /** Asks the thread to finish its attempts in flight (each at most 10 s) and waits for it. */
    stop(): Promise<void> {
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
