/**
 * The two nunjucks environments of the sandbox (autoescaping for HTML, not for
 * subject and text) and the synchronous run of one compiled template in one of
 * them with the sandbox runtime. The environments load no files, and their
 * filters are wrapped by filter-guard.ts.
 */
import nunjucks from 'nunjucks';
import { SandboxViolation } from './failures.ts';
import { guardFilter, type Filter } from './filter-guard.ts';
import { internals } from './nunjucks-internals.ts';
import type { CompiledTemplate } from './sandbox-compiler.ts';
import { SandboxContext, type TemplateData } from './sandbox-context.ts';
import { sandboxRuntime } from './sandbox-runtime.ts';

interface EnvironmentInternals {
  filters: Record<string, Filter>;
  tests: Record<string, Filter>;
}

/** A nunjucks environment for the sandbox: no loader, guarded filters, lookups without prototypes. */
export function createSandboxEnvironment(autoescape: boolean): nunjucks.Environment {
  // An empty loader list: {% include %} and friends are refused by the AST
  // guard, and even if reached would find no file.
  const env = new nunjucks.Environment([], { autoescape, throwOnUndefined: false });
  const { filters, tests } = env as unknown as EnvironmentInternals;
  // `x | constructor` would otherwise find Object.prototype.constructor.
  Object.setPrototypeOf(filters, null);
  Object.setPrototypeOf(tests, null);
  for (const [name, filter] of Object.entries(filters)) filters[name] = guardFilter(name, filter);
  return env;
}

/** Runs a compiled template to a string; throws what the template threw. */
export function runTemplate(
  template: CompiledTemplate,
  env: nunjucks.Environment,
  data: TemplateData,
  maxOutputChars: number,
): string {
  const context = new SandboxContext(env, data, template.blocks, maxOutputChars);
  const frame = new internals.runtime.Frame();
  frame.topLevel = true;
  let outcome: { error: unknown; result: unknown } | undefined;
  template.root(env, context, frame, sandboxRuntime, (error, result) => {
    outcome ??= { error, result };
  });
  // Without async filters or tags (the guard refuses them) the callback runs before root returns.
  if (!outcome) throw new SandboxViolation('the template did not finish synchronously');
  const { error } = outcome;
  if (error) throw error instanceof Error ? error : new SandboxViolation('the template failed without an error');
  if (typeof outcome.result !== 'string') throw new SandboxViolation('the template produced no text');
  return outcome.result;
}
