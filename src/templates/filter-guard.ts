/**
 * Wraps nunjucks' built-in filters for the sandbox. A filter is not applied to
 * a function (`range | string` would print the sandbox's source, `replace`
 * would call it), does not read a blocked attribute name, takes and returns
 * values within the size limits, and the filters that multiply their input
 * (`join`, `replace`, `indent`, `center`, `batch`, `slice`) are refused before
 * they run when their result could pass the limits in one allocation.
 */
import { blockedAttribute, isBlockedAttribute, SandboxViolation } from './failures.ts';
import { checkSize, MAX_ITEMS, MAX_VALUE_CHARS, measure, textOf, tooLarge } from './sandbox-limits.ts';

export type Filter = (this: unknown, ...args: unknown[]) => unknown;

// Filters that read `item[attr]` with a name the template chose, by the
// position of that name among their arguments.
const ATTRIBUTE_ARGUMENT = new Map([
  ['join', 2],
  ['sum', 1],
  ['selectattr', 1],
  ['rejectattr', 1],
]);

function count(value: unknown): number {
  return Array.isArray(value) ? value.length : measure(value);
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : fallback;
}

function occurrences(text: string, part: string): number {
  if (part === '') return text.length + 1;
  let n = 0;
  for (let i = text.indexOf(part); i !== -1; i = text.indexOf(part, i + part.length)) n++;
  return n;
}

// With a regular expression, `$&` in the replacement repeats the match, so
// the longest match multiplies too. matchAll walks the text without copying it.
function regexGrowth(text: string, re: RegExp): number {
  const all = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let n = 0;
  let longest = 1;
  for (const m of text.matchAll(all)) {
    n++;
    longest = Math.max(longest, m[0].length);
    if (!re.global) break;
  }
  return n * longest;
}

function replaceBound([str, old, replacement]: unknown[]): number {
  const text = typeof str === 'string' ? str : textOf(str);
  const times = old instanceof RegExp ? regexGrowth(text, old) : occurrences(text, String(old));
  return text.length + times * measure(replacement);
}

/** Upper bounds of a result's size, for the filters whose output can outgrow their input. */
const RESULT_BOUNDS = new Map<string, (args: unknown[]) => number>([
  ['join', ([arr, del]) => measure(arr) + count(arr) * measure(del ?? '')],
  ['replace', replaceBound],
  ['indent', ([str, width]) => measure(str) * (1 + numberOr(width, 4))],
  ['center', ([str, width]) => Math.max(measure(str), numberOr(width, 80))],
  // The counts also bound the lists these build one push at a time.
  ['batch', ([arr, size]) => (numberOr(size, 0) > MAX_ITEMS ? Infinity : measure(arr) + numberOr(size, 0))],
  ['slice', ([arr, slices]) => (numberOr(slices, 0) > MAX_ITEMS ? Infinity : measure(arr) + 2 * numberOr(slices, 0))],
]);

function checkAttributeArgument(attr: unknown): void {
  if (attr === undefined || attr === null || attr === '' || typeof attr === 'number') return;
  if (typeof attr !== 'string') throw new SandboxViolation('an attribute name must be a string or a number');
  if (isBlockedAttribute(attr)) throw blockedAttribute(attr);
}

function checkArguments(name: string, args: unknown[]): void {
  if (args.some((a) => typeof a === 'function')) {
    throw new SandboxViolation(`the '${name}' filter cannot be applied to a function`);
  }
  for (const arg of args) checkSize(arg, `an argument of the '${name}' filter`);
  const attrIndex = ATTRIBUTE_ARGUMENT.get(name);
  if (attrIndex !== undefined) checkAttributeArgument(args[attrIndex]);
  const bound = RESULT_BOUNDS.get(name)?.(args);
  if (bound !== undefined && bound > MAX_VALUE_CHARS) throw tooLarge(`the result of the '${name}' filter`);
}

/** The filter, checked before and after each use. */
export function guardFilter(name: string, filter: Filter): Filter {
  return function guardedFilter(this: unknown, ...args: unknown[]): unknown {
    checkArguments(name, args);
    const result: unknown = Reflect.apply(filter, this, args);
    checkSize(result, `the result of the '${name}' filter`);
    return result;
  };
}
