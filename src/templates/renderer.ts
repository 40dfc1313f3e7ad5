/**
 * The main-thread side of template rendering: a small piscina pool of sandbox
 * workers. decisions.md: "a render runs in a worker with a time limit (default
 * 1 s) and an output size limit". A render past the limit is aborted, which
 * terminates its worker (the only way to stop a synchronous loop) and piscina
 * starts a fresh one; a worker killed by its memory limit only fails its own
 * render. The event loop never runs template code.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../errors.ts';
import { ioTimeout, type Timer } from '../lib/clock.ts';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import type { RenderOutcome, RenderStarted, RenderTask } from './render-worker.ts';
import type { RenderedTemplate, TemplateSources } from './sandbox.ts';

export interface RendererOptions {
  /** Time limit of one render, counted from the moment a worker starts it. */
  timeoutMs: number;
  /** Limit of subject, html and text together, in UTF-8 bytes. */
  maxOutputBytes: number;
  maxThreads?: number;
}

export interface Renderer {
  render(input: TemplateSources, variables: Record<string, unknown>): Promise<RenderedTemplate>;
  close(): Promise<void>;
}

type Pool = Piscina<RenderTask, RenderOutcome>;
type Expiry = 'queue' | 'render';

// Per worker: a runaway template hits these instead of the process's own heap.
const WORKER_LIMITS = {
  maxOldGenerationSizeMb: 64,
  maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
  stackSizeMb: 4,
};
const IDLE_TIMEOUT_MS = 30_000;
// Waiting for a free (or freshly started, ~100-200 ms) worker is not the
// template's time, but it is bounded too: past this the service is overloaded.
const QUEUE_LIMIT_MS = 10_000;

// The bundle has render-worker.js beside main.js; tests and tsx run the .ts
// file, which Node 24 loads by stripping its types. A string path, not a URL:
// pkg's Worker patch recognises only strings.
function workerFile(): string {
  const file = import.meta.url.endsWith('.ts') ? './render-worker.ts' : './render-worker.js';
  return fileURLToPath(new URL(file, import.meta.url));
}

function renderFailure(message: string): AppError {
  return new AppError('template_render_error', `The template could not be rendered: ${message}`, { message });
}

function workerFailure(e: unknown, expired: Expiry | undefined, timeoutMs: number): AppError {
  if (expired === 'render') return renderFailure(`the render exceeded the time limit of ${timeoutMs} ms`);
  if (expired === 'queue') return new AppError('service_unavailable', 'No template render worker became free in time');
  if ((e as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return renderFailure('the render exceeded the memory limit');
  }
  return renderFailure(`the render worker stopped (${e instanceof Error ? e.message : String(e)})`);
}

function isStarted(message: unknown): message is RenderStarted {
  return typeof (message as Partial<RenderStarted> | null)?.renderStarted === 'number';
}

/** Runs one task; its time limit is armed when the worker reports the start. */
async function runWithTimeLimit(pool: Pool, starts: Map<number, () => void>, task: RenderTask, timeoutMs: number) {
  const abort = new AbortController();
  let expired: Expiry | undefined;
  // Real timers, not the injected clock: they bound CPU time, not domain time.
  const arm = (kind: Expiry, ms: number): Timer => ioTimeout(() => ((expired = kind), abort.abort()), ms);
  let timer = arm('queue', QUEUE_LIMIT_MS);
  starts.set(task.id, () => {
    timer.cancel();
    timer = arm('render', timeoutMs);
  });
  try {
    return await pool.run(task, { signal: abort.signal });
  } catch (e) {
    throw workerFailure(e, expired, timeoutMs);
  } finally {
    timer.cancel();
    starts.delete(task.id);
  }
}

/** Starts the render pool: workers on demand up to maxThreads, each kept until idle for IDLE_TIMEOUT_MS. */
export function createRenderer(opts: RendererOptions): Renderer {
  const pool: Pool = new Piscina({
    filename: workerFile(),
    // No worker kept warm: piscina would start a replacement the moment a runaway render's worker
    // is ended, and a stop during that replacement's start-up aborts the whole process (Node 24
    // asserts when a thread is terminated while it loads its ES module through require(), which
    // piscina uses). A replacement starts with the next render instead.
    minThreads: 0,
    maxThreads: Math.max(1, opts.maxThreads ?? Math.min(4, availableParallelism())),
    idleTimeout: IDLE_TIMEOUT_MS,
    resourceLimits: WORKER_LIMITS,
  });
  const starts = new Map<number, () => void>();
  let nextId = 1;
  pool.on('message', (message: unknown) => {
    if (isStarted(message)) starts.get(message.renderStarted)?.();
  });
  // A worker that dies between tasks fails no render and piscina replaces it;
  // unheard, this 'error' event would be thrown on the main thread.
  pool.on('error', () => {});
  return {
    async render(input, variables) {
      const task = { id: nextId++, input, variables, maxOutputBytes: opts.maxOutputBytes };
      const outcome = await runWithTimeLimit(pool, starts, task, opts.timeoutMs);
      if (outcome.ok) return outcome.value;
      throw new AppError(outcome.code, outcome.message, outcome.details);
    },
    close: () => pool.close(),
  };
}
