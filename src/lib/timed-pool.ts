/**
 * A piscina pool whose tasks have a time limit counted from the moment a worker starts them
 * (a worker posts `{ taskStarted: id }`, taskStarted below): waiting for a free or freshly
 * started worker is bounded separately, and is not the task's time. A task past either limit
 * is aborted, which ends its worker (the only way to stop synchronous code). Used by the
 * template render pool and the DMARC report reader.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ioTimeout, type Timer } from './clock.ts';
import type { TaskStarted } from './task-started.ts';

const isStarted = (message: unknown): message is TaskStarted =>
  typeof (message as Partial<TaskStarted> | null)?.taskStarted === 'number';

/** Why a task did not finish: it waited too long, ran too long, ran out of memory, or its worker failed. */
export class TaskFailure extends Error {
  readonly why: 'queue' | 'time' | 'memory' | 'worker';

  constructor(why: TaskFailure['why'], cause: unknown) {
    const message = why !== 'worker' ? `task failed (${why})` : cause instanceof Error ? cause.message : String(cause);
    super(message, { cause });
    this.why = why;
  }
}

export interface TimedPoolOptions {
  /** The worker module (a string path: pkg's Worker patch recognises only strings). */
  filename: string;
  maxThreads: number;
  idleTimeoutMs: number;
  resourceLimits: ResourceLimits;
  /** How long a task may wait for a worker. */
  queueLimitMs: number;
}

export interface TimedPool<T extends { id: number }, R> {
  /** Runs `task` (its id set here) with `timeoutMs` from its start; rejects with a TaskFailure. */
  run(task: Omit<T, 'id'>, timeoutMs: number): Promise<R>;
  close(): Promise<void>;
}

export function createTimedPool<T extends { id: number }, R>(opts: TimedPoolOptions): TimedPool<T, R> {
  const pool = new Piscina<T, R>({
    filename: opts.filename,
    // No worker kept warm: piscina would start a replacement the moment an aborted task's worker
    // ends, and a stop during that replacement's start-up aborts the whole process (Node 24
    // asserts when a thread is terminated while it loads its ES module through require(), which
    // piscina uses). A replacement starts with the next task instead.
    minThreads: 0,
    maxThreads: opts.maxThreads,
    idleTimeout: opts.idleTimeoutMs,
    resourceLimits: opts.resourceLimits,
  });
  const starts = new Map<number, () => void>();
  let nextId = 1;
  pool.on('message', (message: unknown) => {
    if (isStarted(message)) starts.get(message.taskStarted)?.();
  });
  // A worker that dies between tasks fails no task and piscina replaces it;
  // unheard, this 'error' event would be thrown on the main thread.
  pool.on('error', () => {});
  return {
    async run(fields, timeoutMs) {
      const task = { ...fields, id: nextId++ } as T;
      const abort = new AbortController();
      let expired: 'queue' | 'time' | undefined;
      // Real timers, not the injected clock: they bound CPU time, not domain time.
      const arm = (kind: 'queue' | 'time', ms: number): Timer => ioTimeout(() => ((expired = kind), abort.abort()), ms);
      let timer = arm('queue', opts.queueLimitMs);
      starts.set(task.id, () => {
        timer.cancel();
        timer = arm('time', timeoutMs);
      });
      try {
        return await pool.run(task, { signal: abort.signal });
      } catch (e) {
        const memory = (e as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
        throw new TaskFailure(expired ?? (memory ? 'memory' : 'worker'), e);
      } finally {
        timer.cancel();
        starts.delete(task.id);
      }
    },
    close: () => pool.close(),
  };
}
