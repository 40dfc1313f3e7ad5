/**
 * Size limits on what a template builds. A worker's resourceLimits stop a
 * template whose memory grows step by step, but one large allocation
 * (flattening a 100 MB string, joining a huge list) aborts the whole process:
 * Node gives a worker at its heap limit only 16 MB of grace
 * (Worker::NearHeapLimit) before V8 gives up. So every value a template can
 * build stays below MAX_VALUE_CHARS, lists print through a budget, and filters
 * that multiply their input are checked before they run.
 */
import { SandboxViolation } from './failures.ts';
import { internals } from './nunjucks-internals.ts';

/** Longest string (in UTF-16 units) an expression, filter or variable may hold. */
export const MAX_VALUE_CHARS = 1024 * 1024;
// Jinja2's sandbox caps range() at 100 000 items (MAX_RANGE); the same bound
// applies to the counts batch() and slice() would build.
export const MAX_ITEMS = 100_000;

/** The refusal for a value past the limits. */
export function tooLarge(what: string): SandboxViolation {
  return new SandboxViolation(`${what} is larger than the template limit of ${MAX_VALUE_CHARS} characters`);
}

/** Characters plus items in a value, walking lists and dicts; stops counting past the limit. */
export function measure(value: unknown, limit = MAX_VALUE_CHARS): number {
  if (typeof value === 'string') return value.length;
  if (value instanceof internals.runtime.SafeString) return value.length;
  if (value === null || typeof value !== 'object') return 1;
  // Lists may share themselves ([a, a] doubled 40 times): counting repeats, capped, is what bounds them.
  let total = 1;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    total += measure(item, limit - total);
    if (total > limit) break;
  }
  return total;
}

/** Throws unless the value is within MAX_VALUE_CHARS. */
export function checkSize(value: unknown, what: string): void {
  if (measure(value) > MAX_VALUE_CHARS) throw tooLarge(what);
}

/**
 * A value as text, the way JavaScript would print it (lists joined by commas),
 * but refusing to build more than `limit` characters.
 */
export function textOf(value: unknown, limit = MAX_VALUE_CHARS): string {
  if (typeof value === 'function') throw new SandboxViolation('a function cannot be turned into text');
  if (!Array.isArray(value)) {
    const text = String(value);
    if (text.length > limit) throw tooLarge('a text');
    return text;
  }
  const parts: string[] = [];
  let used = 0;
  for (const item of value as unknown[]) {
    const part = item === null || item === undefined ? '' : textOf(item, limit - used);
    used += part.length + 1;
    if (used > limit + 1) throw tooLarge('a list');
    parts.push(part);
  }
  return parts.join(',');
}

// Lists made by templates print through textOf, also when JavaScript converts
// them implicitly (`a < b`, `"x" in a`, a test or filter doing arithmetic).
const LIST_PROTO: object = Object.freeze(
  Object.create(Array.prototype, {
    toString: { value: listText },
    [Symbol.toPrimitive]: { value: listText },
  }) as object,
);

function listText(this: unknown[]): string {
  return textOf(this);
}

/** Gives an array the budgeted conversion to text; returns the same array. */
export function asTemplateList<T extends unknown[]>(items: T): T {
  return Object.setPrototypeOf(items, LIST_PROTO) as T;
}
