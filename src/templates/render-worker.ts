/**
 * The piscina worker that renders templates. It receives plain data and
 * returns plain data: an AppError cannot cross the thread boundary as a class
 * instance, so failures travel as `{ ok: false, code, message, details }` and
 * the renderer rebuilds the AppError on the main thread. Loaded by Node as
 * this .ts file in development and tests, and as render-worker.js in the bundle.
 */
import { parentPort } from 'node:worker_threads';
import { AppError } from '../errors.ts';
import { taskStarted } from '../lib/task-started.ts';
import { renderTemplateSync, type RenderedTemplate, type TemplateSources } from './sandbox.ts';

export interface RenderTask {
  /** Echoed in the start message, so the renderer's time limit counts from here. */
  id: number;
  input: TemplateSources;
  variables: Record<string, unknown>;
  maxOutputBytes: number;
}

export type RenderFailureCode = 'template_variable_missing' | 'template_render_error';

export type RenderOutcome =
  | { ok: true; value: RenderedTemplate }
  | { ok: false; code: RenderFailureCode; message: string; details: Record<string, unknown> };

function isRenderFailure(e: unknown): e is AppError & { code: RenderFailureCode } {
  return e instanceof AppError && (e.code === 'template_variable_missing' || e.code === 'template_render_error');
}

function toFailure(e: unknown): RenderOutcome {
  if (isRenderFailure(e)) return { ok: false, code: e.code, message: e.message, details: { ...e.details } };
  // Not expected (the sandbox maps every failure), but a bug must not look like success.
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return {
    ok: false,
    code: 'template_render_error',
    message: `The template could not be rendered: ${message}`,
    details: { message },
  };
}

/** Renders one template task; never throws, so every outcome is structured-cloneable. */
export default function renderTask(task: RenderTask): RenderOutcome {
  // Worker start-up and queueing are not the template's time: its limit counts from here.
  parentPort?.postMessage(taskStarted(task.id));
  try {
    const value = renderTemplateSync(task.input, task.variables, { maxOutputBytes: task.maxOutputBytes });
    return { ok: true, value };
  } catch (e) {
    return toFailure(e);
  }
}
