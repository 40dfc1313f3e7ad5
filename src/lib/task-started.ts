// The worker side of lib/timed-pool.ts, apart so that a worker loads nothing of the pool (piscina).

/** What a worker posts to its parent when it starts a task. */
export interface TaskStarted {
  taskStarted: number;
}

/** The message a worker posts (parentPort.postMessage) as it starts task `id`. */
export const taskStarted = (id: number): TaskStarted => ({ taskStarted: id });
