/**
 * The two ways a template fails inside the sandbox, before they become
 * AppErrors: a variable the template uses but the caller did not supply, and a
 * rule of the sandbox the template broke. Both carry the 1-based template line
 * when it is known.
 */

/** Base of the sandbox's own failures, so the runtime passes them through unwrapped. */
export class SandboxFailure extends Error {
  readonly line: number | undefined;

  constructor(message: string, line?: number) {
    super(message);
    this.line = line;
  }
}

/** StrictUndefined: a variable (or attribute path) was used but never supplied. */
export class MissingVariable extends SandboxFailure {
  readonly variable: string;

  constructor(variable: string, line?: number) {
    super(`template variable '${variable}' was not supplied`, line);
    this.variable = variable;
  }
}

/** Something the sandbox refuses: a blocked attribute, a call of a foreign function, a forbidden tag. */
export class SandboxViolation extends SandboxFailure {}

// decisions.md, Templates: "no access to attributes starting with `_`, to
// `constructor`, `prototype`, `__proto__`". The others are the function
// introspection names that lead from any function back to its callers.
const BLOCKED_ATTRIBUTES = new Set(['constructor', 'prototype', 'caller', 'callee', 'arguments']);
const BLOCKED_VARIABLES = new Set(['constructor', 'prototype']);

/** True for an attribute name a template may never read. */
export function isBlockedAttribute(name: string): boolean {
  return name.startsWith('_') || BLOCKED_ATTRIBUTES.has(name);
}

/** True for a variable name a template may never use (`caller` stays: it is how `{% call %}` works). */
export function isBlockedVariable(name: string): boolean {
  return name.startsWith('_') || BLOCKED_VARIABLES.has(name);
}

/** The refusal for a blocked attribute name. */
export function blockedAttribute(name: string, line?: number): SandboxViolation {
  return new SandboxViolation(`access to attribute '${name}' is not allowed in templates`, line);
}
