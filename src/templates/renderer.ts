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
import { AppError } from '../errors.ts';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import { createTimedPool, TaskFailure } from '../lib/timed-pool.ts';
import type { RenderOutcome, RenderTask } from './render-worker.ts';
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

function workerFailure(e: unknown, timeoutMs: number): AppError {
  if (!(e instanceof TaskFailure)) return renderFailure(`the render failed (${String(e)})`);
  switch (e.why) {
    case 'time':
      return renderFailure(`the render exceeded the time limit of ${timeoutMs} ms`);
    case 'queue':
      return new AppError('service_unavailable', 'No template render worker became free in time');
    case 'memory':
      return renderFailure('the render exceeded the memory limit');
    case 'worker':
      return renderFailure(`the render worker stopped (${e.message})`);
  }
}

/** Starts the render pool: workers on demand up to maxThreads, each kept until idle for IDLE_TIMEOUT_MS. */
export function createRenderer(opts: RendererOptions): Renderer {
  const pool = createTimedPool<RenderTask, RenderOutcome>({
    filename: workerFile(),
    maxThreads: Math.max(1, opts.maxThreads ?? Math.min(4, availableParallelism())),
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    resourceLimits: WORKER_LIMITS,
    queueLimitMs: QUEUE_LIMIT_MS,
  });
  return {
    async render(input, variables) {
      const task = { input, variables, maxOutputBytes: opts.maxOutputBytes };
      const outcome = await pool.run(task, opts.timeoutMs).catch((e: unknown) => {
        throw workerFailure(e, opts.timeoutMs);
      });
      if (outcome.ok) return outcome.value;
      throw new AppError(outcome.code, outcome.message, outcome.details);
    },
    close: () => pool.close(),
  };
}
