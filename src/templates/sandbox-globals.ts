/**
 * The functions a template may call, and nothing else: its own macros and
 * `caller` blocks (registered by the sandbox runtime as they are created), and
 * the Jinja2 globals `range`, `cycler` and `joiner` below. decisions.md:
 * "no access ... to functions not made available on purpose".
 */
import { SandboxViolation } from './failures.ts';
import { asTemplateList, MAX_ITEMS } from './sandbox-limits.ts';

const allowed = new WeakSet<object>();

/** Marks a function as callable from templates and returns it. */
export function allowCallable<T extends object>(fn: T): T {
  allowed.add(fn);
  // `m ~ ""` would otherwise print the function's source. Unreachable as an
  // attribute: the runtime refuses every attribute of a function.
  Object.defineProperty(fn, 'toString', { value: () => '[function]' });
  return fn;
}

/** True for a function a template was given on purpose. */
export function isAllowedCallable(value: unknown): boolean {
  return typeof value === 'function' && allowed.has(value);
}

function toNumber(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new SandboxViolation('range() takes numbers');
}

function range(start: unknown, stop?: unknown, step?: unknown): number[] {
  const [from, to] = stop === undefined ? [0, toNumber(start)] : [toNumber(start), toNumber(stop)];
  const by = step === undefined ? 1 : toNumber(step);
  if (by === 0) throw new SandboxViolation('range() step must not be zero');
  const count = Math.max(0, Math.ceil((to - from) / by));
  // A larger loop is a mistake or an attack; refusing it beats waiting for the time limit.
  if (count > MAX_ITEMS) throw new SandboxViolation(`range() is limited to ${MAX_ITEMS} items`);
  return asTemplateList(Array.from({ length: count }, (_, i) => from + i * by));
}

// nunjucks' own cycler keeps its position in `this`, which a call from a
// template would not bind; these closures need no `this`.
function cycler(...items: unknown[]): Record<string, unknown> {
  let index = -1;
  const state: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  state.current = null;
  state.next = allowCallable(() => {
    index = items.length === 0 ? -1 : (index + 1) % items.length;
    state.current = items[index] ?? null;
    return state.current;
  });
  state.reset = allowCallable(() => {
    index = -1;
    state.current = null;
    return '';
  });
  return state;
}

function joiner(separator: unknown = ','): () => unknown {
  let first = true;
  return allowCallable(() => {
    const out = first ? '' : separator;
    first = false;
    return out;
  });
}

/** The globals every template sees, in a null-prototype object (no inherited names to look up). */
export const sandboxGlobals: Readonly<Record<string, unknown>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, unknown>, {
    range: allowCallable(range),
    cycler: allowCallable(cycler),
    joiner: allowCallable(joiner),
  }),
);
