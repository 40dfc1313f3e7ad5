/**
 * The template sandbox: nunjucks configured like Jinja2's SandboxedEnvironment
 * with StrictUndefined (decisions.md, Templates). Pure and synchronous: the
 * render runs inside a worker (render-worker.ts) that enforces the time limit,
 * while the syntax check runs where templates are created and updated.
 */
import { AppError } from '../errors.ts';
import { MissingVariable, SandboxFailure } from './failures.ts';
import { isTemplateError } from './nunjucks-internals.ts';
import { compileTemplate, compileTemplateCached } from './sandbox-compiler.ts';
import { toTemplateData, type TemplateData } from './sandbox-context.ts';
import { createSandboxEnvironment, runTemplate } from './sandbox-env.ts';

export interface TemplateSources {
  subject: string;
  html: string | null;
  text: string | null;
}

export type RenderedTemplate = TemplateSources;

export interface StoredTemplateSources {
  subject_template: string;
  html_template?: string | null | undefined;
  text_template?: string | null | undefined;
}

// decisions.md: "autoescape on for HTML, off for subject and text".
const htmlEnv = createSandboxEnvironment(true);
const plainEnv = createSandboxEnvironment(false);

/** The template_render_error for one field, with the details the API returns. */
export function renderError(field: string, message: string, line?: number): AppError {
  const details = line === undefined ? { field, message } : { field, line, message };
  return new AppError('template_render_error', `The ${field} could not be rendered: ${message}`, details);
}

// Parser errors carry 1-based lines; errors nunjucks raises while running
// carry the generated code's 0-based `lineno`, hence the offset.
function toAppError(e: unknown, field: string, runtimeLineOffset: 0 | 1): AppError {
  if (e instanceof MissingVariable) {
    return new AppError('template_variable_missing', `Template variable '${e.variable}' was not supplied`, {
      variable: e.variable,
      field,
    });
  }
  if (e instanceof SandboxFailure) return renderError(field, e.message, e.line);
  if (isTemplateError(e)) {
    const line = typeof e.lineno === 'number' ? e.lineno + runtimeLineOffset : undefined;
    return renderError(field, e.message, line);
  }
  // A stack overflow from runaway recursion arrives here as a RangeError.
  return renderError(field, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
}

// A syntax error at the end of the source ("expected variable end") comes
// without a line from nunjucks: it is on the last line.
function compileError(e: unknown, field: string, source: string): AppError {
  if (isTemplateError(e) && typeof e.lineno !== 'number') {
    return renderError(field, e.message, source.split('\n').length);
  }
  return toAppError(e, field, 0);
}

/**
 * Compiles each template of a stored template so a syntax error is refused on
 * create and update (422 template_render_error with field, line, message).
 */
export function checkTemplateSyntax(t: StoredTemplateSources): void {
  for (const field of ['subject_template', 'html_template', 'text_template'] as const) {
    const source = t[field];
    if (source === null || source === undefined) continue;
    try {
      compileTemplate(source);
    } catch (e) {
      throw compileError(e, field, source);
    }
  }
}

function renderField(field: 'subject' | 'html' | 'text', source: string, data: TemplateData, maxChars: number): string {
  let template;
  try {
    template = compileTemplateCached(source);
  } catch (e) {
    throw compileError(e, field, source);
  }
  try {
    return runTemplate(template, field === 'html' ? htmlEnv : plainEnv, data, maxChars);
  } catch (e) {
    throw toAppError(e, field, 1);
  }
}

function templateData(variables: Record<string, unknown>): TemplateData {
  try {
    return toTemplateData(variables);
  } catch (e) {
    throw toAppError(e, 'variables', 0);
  }
}

/**
 * Renders subject, html and text with the same variables; throws AppError
 * template_variable_missing or template_render_error (also for a subject with
 * a line break, and for output above maxOutputBytes in total).
 */
export function renderTemplateSync(
  input: TemplateSources,
  variables: Record<string, unknown>,
  opts: { maxOutputBytes: number },
): RenderedTemplate {
  const data = templateData(variables);
  let total = 0;
  const render = (field: 'subject' | 'html' | 'text', source: string): string => {
    // A character is at least one byte: no buffer needs to grow past what is left.
    const out = renderField(field, source, data, opts.maxOutputBytes - total);
    total += Buffer.byteLength(out);
    if (total > opts.maxOutputBytes) {
      throw renderError(field, `the rendered email is larger than ${opts.maxOutputBytes} bytes`);
    }
    return out;
  };
  const subject = render('subject', input.subject);
  // The subject becomes a header: a line break from a variable would inject headers.
  if (/[\r\n]/.test(subject)) throw renderError('subject', 'the rendered subject contains a line break');
  const html = input.html === null ? null : render('html', input.html);
  const text = input.text === null ? null : render('text', input.text);
  return { subject, html, text };
}
