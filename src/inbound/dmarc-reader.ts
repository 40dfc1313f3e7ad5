/**
 * The main-thread side of reading DMARC aggregate reports: a one-thread piscina pool of
 * dmarc-worker.ts. Unpacking and parsing a report at the caps (16 MiB of XML, 20,000 records)
 * takes seconds of CPU; in a worker the event loop keeps answering HTTP and SMTP meanwhile.
 * A report past its time limit is aborted, which ends its worker (the only way to stop a
 * synchronous parse), and refused with the reason; one past the worker's memory limit too.
 */
import { fileURLToPath } from 'node:url';
import { AppError } from '../errors.ts';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import { createTimedPool, TaskFailure } from '../lib/timed-pool.ts';
import type { Parsed } from './dmarc-parse.ts';
import type { ReadTask } from './dmarc-worker.ts';

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

// The bundle has dmarc-worker.js beside main.js; tests and tsx run the .ts file (as the render pool).
function workerFile(): string {
  const file = import.meta.url.endsWith('.ts') ? './dmarc-worker.ts' : './dmarc-worker.js';
  return fileURLToPath(new URL(file, import.meta.url));
}

/** What a read that did not finish answers: refused (time, memory), busy, or an error (451). */
function failure(e: unknown, timeoutMs: number): Parsed {
  const why = e instanceof TaskFailure ? e.why : undefined;
  if (why === 'time') return { ok: false, reason: `reading the report took longer than ${timeoutMs} ms: refused` };
  if (why === 'queue') throw new AppError('server_busy', 'Too many DMARC reports are being read; try again later');
  if (why === 'memory') {
    return { ok: false, reason: `reading the report needed more than ${REPORT_READ_HEAP_MB} MB of memory: refused` };
  }
  const cause = e instanceof TaskFailure ? e.cause : e;
  throw cause instanceof Error ? cause : new Error(String(cause));
}

/** Starts the report reader's pool: its one worker starts with a report and ends when idle. */
export function createReportReader(opts: ReportReaderOptions = {}): ReportReader {
  const timeoutMs = opts.timeoutMs ?? REPORT_READ_TIMEOUT_MS;
  const pool = createTimedPool<ReadTask, Parsed>({
    filename: workerFile(),
    maxThreads: 1,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    resourceLimits: {
      maxOldGenerationSizeMb: REPORT_READ_HEAP_MB,
      maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
    },
    queueLimitMs: opts.queueLimitMs ?? QUEUE_LIMIT_MS,
  });
  return {
    read: (raw) => pool.run({ raw }, timeoutMs).catch((e: unknown) => failure(e, timeoutMs)),
    close: () => pool.close(),
  };
}
