/**
 * What a compiled template runs against: the caller's variables, copied into
 * objects without Object.prototype, and the minimal context interface the
 * nunjucks code generator calls (set, blocks). Copying means a key named
 * `__proto__` or `constructor` in the variables is plain data: it can neither
 * pollute Object.prototype nor lead a template to a constructor.
 */
import { SandboxViolation } from './failures.ts';
import type { RootRenderFn } from './nunjucks-internals.ts';
import { asTemplateList, MAX_VALUE_CHARS, tooLarge } from './sandbox-limits.ts';

// Data objects print like ordinary ones ("[object Object]") but inherit
// nothing else; the runtime only reads own properties, so this toString is
// never reachable from a template.
const DATA_PROTO: object = Object.freeze(
  Object.create(null, { toString: { value: () => '[object Object]' } }) as object,
);
const MAX_DEPTH = 64;

export type TemplateData = Record<string, unknown>;

/** A deep copy of JSON-like variables into prototype-free objects; other values are dropped. */
export function toTemplateData(variables: Record<string, unknown>): TemplateData {
  return copyObject(variables, 0);
}

function copyValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string' && value.length > MAX_VALUE_CHARS) throw tooLarge('a variable');
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value;
  if (depth >= MAX_DEPTH) throw new SandboxViolation(`variables are nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return asTemplateList(value.map((v) => copyValue(v, depth + 1)));
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return copyObject(value as Record<string, unknown>, depth + 1);
  return undefined;
}

function copyObject(source: Record<string, unknown>, depth: number): TemplateData {
  const copy = Object.create(DATA_PROTO) as TemplateData;
  for (const key of Object.keys(source)) {
    // defineProperty, not assignment: `copy.__proto__ = x` would be a prototype change.
    Object.defineProperty(copy, key, { value: copyValue(source[key], depth), enumerable: true, writable: true });
  }
  return copy;
}

/** The `context` argument of compiled template code. */
export class SandboxContext {
  readonly env: unknown;
  /** Top-level variables; `{% set %}` at the top level writes here. */
  readonly ctx: Record<string, unknown>;
  /** Longest text one output buffer (the template, a macro, a `{% set %}` block) may grow to. */
  readonly maxOutputChars: number;
  private readonly blocks: ReadonlyMap<string, RootRenderFn>;

  constructor(env: unknown, data: TemplateData, blocks: ReadonlyMap<string, RootRenderFn>, maxOutputChars: number) {
    this.env = env;
    this.maxOutputChars = maxOutputChars;
    // A fresh top level per field: a `{% set %}` in the subject does not leak into the body.
    this.ctx = Object.assign(Object.create(null) as Record<string, unknown>, data);
    this.blocks = blocks;
  }

  setVariable(name: string, value: unknown): void {
    Object.defineProperty(this.ctx, name, { value, enumerable: true, writable: true, configurable: true });
  }

  getVariables(): Record<string, unknown> {
    return this.ctx;
  }

  getBlock(name: string): RootRenderFn {
    const block = this.blocks.get(name);
    if (!block) throw new SandboxViolation(`unknown block '${name}'`);
    return block;
  }

  addBlock(): void {
    throw new SandboxViolation('templates cannot extend other templates');
  }

  getSuper(): void {
    throw new SandboxViolation('super() needs a parent template; templates cannot extend others');
  }

  // Exports matter only to {% import %}, which the sandbox refuses.
  addExport(): void {}
}
