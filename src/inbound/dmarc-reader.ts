/**
 * The main-thread side of reading DMARC aggregate reports: a one-thread piscina pool of
 * dmarc-worker.ts. Unpacking and parsing a report at the caps (16 MiB of XML, 20,000 records)
 * takes seconds of CPU; in a worker the event loop keeps answering HTTP and SMTP meanwhile.
 * A report past its time limit is aborted, which ends its worker (the only way to stop a
 * synchronous parse), and refused with the reason; one past the worker's memory limit too.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../errors.ts';
import { ioTimeout, type Timer } from '../lib/clock.ts';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import type { Parsed } from './dmarc-parse.ts';
import type { ReadStarted, ReadTask } from './dmarc-worker.ts';

export interface ReportReaderOptions {
  /** Time limit of one report, counted from the moment a worker starts it. */
  timeoutMs?: number;
  /** Time a report may wait for the worker (reports are read one at a time); past it, 452 busy. */
  queueLimitMs?: number;
}

/** Reads report messages; a report that cannot be used is an answer ({ ok: false, reason }). */
export interface ReportReader {
  read(raw: Buffer): Promise<Parsed>;
  close(): Promise<void>;
}

/** A report at the caps reads in 2 to 5 s on a busy 2-core machine; six times that is not a report. */
export const REPORT_READ_TIMEOUT_MS = 30_000;
const QUEUE_LIMIT_MS = 60_000;
/** One report at the caps peaks at ~330 MB of heap while parsed; past this it is refused, not the process. */
export const REPORT_READ_HEAP_MB = 512;
// Reports come a few a day per domain and reporter: one thread, ended after a minute idle.
const IDLE_TIMEOUT_MS = 60_000;

type Pool = Piscina<ReadTask, Parsed>;
type Expiry = 'queue' | 'read';

// The bundle has dmarc-worker.js beside main.js; tests and tsx run the .ts file (as the render pool).
function workerFile(): string {
  const file = import.meta.url.endsWith('.ts') ? './dmarc-worker.ts' : './dmarc-worker.js';
  return fileURLToPath(new URL(file, import.meta.url));
}

const isStarted = (message: unknown): message is ReadStarted =>
  typeof (message as Partial<ReadStarted> | null)?.reportStarted === 'number';

/** What a read that did not finish answers: refused (time, memory), busy, or an error (451). */
function failure(e: unknown, expired: Expiry | undefined, timeoutMs: number): Parsed {
  if (expired === 'read') return { ok: false, reason: `reading the report took longer than ${timeoutMs} ms: refused` };
  if (expired === 'queue') throw new AppError('server_busy', 'Too many DMARC reports are being read; try again later');
  if ((e as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return { ok: false, reason: `reading the report needed more than ${REPORT_READ_HEAP_MB} MB of memory: refused` };
  }
  throw e instanceof Error ? e : new Error(String(e));
}

/** Starts the report reader's pool: its one worker starts with a report and ends when idle. */
export function createReportReader(opts: ReportReaderOptions = {}): ReportReader {
  const timeoutMs = opts.timeoutMs ?? REPORT_READ_TIMEOUT_MS;
  const pool: Pool = new Piscina({
    filename: workerFile(),
    // None kept warm, as the render pool: a replacement started the moment an aborted read's worker
    // ends could be stopped mid-load by a shutdown, which Node 24 answers by aborting the process.
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: IDLE_TIMEOUT_MS,
    resourceLimits: {
      maxOldGenerationSizeMb: REPORT_READ_HEAP_MB,
      maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
    },
  });
  const starts = new Map<number, () => void>();
  let nextId = 1;
  pool.on('message', (message: unknown) => {
    if (isStarted(message)) starts.get(message.reportStarted)?.();
  });
  // A worker that dies between tasks fails no read; unheard, this event would throw on the main thread.
  pool.on('error', () => {});
  return {
    async read(raw) {
      const task: ReadTask = { id: nextId++, raw };
      const abort = new AbortController();
      let expired: Expiry | undefined;
      // Real timers, not the injected clock: they bound CPU time, not domain time.
      const arm = (kind: Expiry, ms: number): Timer => ioTimeout(() => ((expired = kind), abort.abort()), ms);
      let timer = arm('queue', opts.queueLimitMs ?? QUEUE_LIMIT_MS);
      starts.set(task.id, () => {
        timer.cancel();
        timer = arm('read', timeoutMs);
      });
      try {
        return await pool.run(task, { signal: abort.signal });
      } catch (e) {
        return failure(e, expired, timeoutMs);
      } finally {
        timer.cancel();
        starts.delete(task.id);
      }
    },
    close: () => pool.close(),
  };
}
