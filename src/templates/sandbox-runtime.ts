/**
 * The runtime object handed to compiled templates in place of nunjucks' own.
 * Everything a template reads goes through it: variables only from the data
 * the caller supplied, `{% set %}` names and the sandbox globals; attributes
 * only as own properties of data, never of functions, never a blocked name;
 * calls only of functions in the allow list.
 */
import { blockedAttribute, isBlockedAttribute, MissingVariable, SandboxFailure, SandboxViolation } from './failures.ts';
import { internals, type RuntimeFrame } from './nunjucks-internals.ts';
import type { SandboxContext } from './sandbox-context.ts';
import { allowCallable, isAllowedCallable, sandboxGlobals } from './sandbox-globals.ts';
import { asTemplateList, MAX_VALUE_CHARS, textOf, tooLarge } from './sandbox-limits.ts';

const base = internals.runtime;
const MISSING = Symbol('missing');

function findName(context: SandboxContext, frame: RuntimeFrame, name: string): unknown {
  const local = frame.lookup(name);
  if (local !== undefined) return local;
  // Own properties only: the data objects have no prototype to fall back to anyway.
  if (Object.hasOwn(context.ctx, name)) return context.ctx[name];
  return Object.hasOwn(sandboxGlobals, name) ? sandboxGlobals[name] : MISSING;
}

/** StrictUndefined: a name that is nowhere is a missing variable. */
function contextOrFrameLookup(context: SandboxContext, frame: RuntimeFrame, name: string, line?: number): unknown {
  const value = findName(context, frame, name);
  if (value === MISSING) throw new MissingVariable(name, line);
  return value;
}

/** Inside `is defined` and `default(...)`: a missing name is just undefined. */
function lenientLookup(context: SandboxContext, frame: RuntimeFrame, name: string): unknown {
  const value = findName(context, frame, name);
  return value === MISSING ? undefined : value;
}

function attributeName(key: unknown, line?: number): string | number {
  if (typeof key === 'number') return key;
  // A list or dict as a key would be turned into a name by its own toString.
  if (typeof key !== 'string' && !(key instanceof base.SafeString)) {
    throw new SandboxViolation('an attribute name must be a string or a number', line);
  }
  const name = typeof key === 'string' ? key : key.val;
  if (isBlockedAttribute(name)) throw blockedAttribute(name, line);
  return name;
}

function readAttribute(obj: unknown, key: unknown, line?: number): unknown {
  const name = attributeName(key, line);
  if (typeof obj === 'function') throw new SandboxViolation('functions have no attributes in templates', line);
  // Inherited members (toString, constructor, __proto__, array methods) are
  // never reachable: Object(obj) lets strings answer for their indexes and length.
  if (!Object.hasOwn(Object(obj) as object, name)) return MISSING;
  const value = (obj as Record<string | number, unknown>)[name];
  if (typeof value === 'function' && !isAllowedCallable(value)) {
    throw new SandboxViolation(`'${String(name)}' is not a function templates may use`, line);
  }
  return value;
}

function childPath(path: string, key: unknown): string {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}.${String(key)}`;
}

/** `a.b` and `a[b]`; a missing attribute is a missing variable named by its path. */
function memberLookup(obj: unknown, key: unknown, path: string, line?: number): unknown {
  if (obj === undefined || obj === null) throw new MissingVariable(childPath(path, key), line);
  const value = readAttribute(obj, key, line);
  if (value === MISSING) throw new MissingVariable(childPath(path, key), line);
  return value;
}

function lenientMemberLookup(obj: unknown, key: unknown, _path: string, line?: number): unknown {
  if (obj === undefined || obj === null) return undefined;
  const value = readAttribute(obj, key, line);
  return value === MISSING ? undefined : value;
}

function callWrap(fn: unknown, name: string, context: unknown, args: unknown[]): unknown {
  if (!isAllowedCallable(fn)) throw new SandboxViolation(`'${name}' is not a function templates may call`);
  return Reflect.apply(fn as (...a: unknown[]) => unknown, context, args);
}

function makeMacro(...args: Parameters<typeof base.makeMacro>): ReturnType<typeof base.makeMacro> {
  return allowCallable(base.makeMacro(...args));
}

// nunjucks would wrap the sandbox's failures into a TemplateError and lose their kind.
function handleError(error: unknown, lineno: number, colno: number): unknown {
  return error instanceof SandboxFailure ? error : base.handleError(error, lineno, colno);
}

// Printing a function would print the source of the sandbox itself; a list
// prints through the budget; escaping may grow a text six times, in one allocation.
function suppressValue(val: unknown, autoescape: boolean): unknown {
  if (typeof val === 'function') throw new SandboxViolation('a function cannot be output');
  const value = Array.isArray(val) ? textOf(val) : val;
  if (autoescape && typeof value === 'string' && value.length > MAX_VALUE_CHARS) throw tooLarge('an escaped value');
  return base.suppressValue(value, autoescape);
}

/** Every write to an output buffer; the cap keeps the final text within the output limit. */
function appendOutput(context: SandboxContext, buffer: string, piece: unknown): string {
  const text = typeof piece === 'string' ? piece : String(piece);
  if (buffer.length + text.length > context.maxOutputChars) {
    throw new SandboxViolation('the rendered email is larger than the output limit');
  }
  return buffer + text;
}

function joinText(a: string, b: string): string {
  if (a.length + b.length > MAX_VALUE_CHARS) throw tooLarge('a joined text');
  return a + b;
}

/** `a ~ b`: doubling a string 30 times would otherwise cost nothing until it is used. */
function concat(a: unknown, b: unknown): string {
  return joinText(textOf(a), textOf(b));
}

/** `a + b` with JavaScript's meaning, but a text result is held to the budget. */
function add(a: unknown, b: unknown): unknown {
  const x = typeof a === 'object' && a !== null ? textOf(a) : a;
  const y = typeof b === 'object' && b !== null ? textOf(b) : b;
  if (typeof x === 'string' || typeof y === 'string') return joinText(String(x), String(y));
  return (x as number) + (y as number);
}

// `"constructor" in {}` is true in JavaScript but not for template data.
function inOperator(key: unknown, val: unknown): boolean {
  if (val === null || typeof val !== 'object' || Array.isArray(val) || val instanceof base.SafeString) {
    return base.inOperator(key, val);
  }
  return (typeof key === 'string' || typeof key === 'number') && Object.hasOwn(val, key);
}

/** The `runtime` argument of every compiled template function. */
export const sandboxRuntime = Object.freeze({
  ...base,
  contextOrFrameLookup,
  lenientLookup,
  memberLookup,
  lenientMemberLookup,
  callWrap,
  makeMacro,
  handleError,
  suppressValue,
  inOperator,
  appendOutput,
  concat,
  add,
  list: asTemplateList,
});
