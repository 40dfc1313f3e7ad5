import type { z } from 'zod';
import { AppError } from './errors.ts';
import { closestName } from './lib/closest-name.ts';

export interface FieldError {
  field: string;
  message: string;
  code: string;
}

type Schema = z.core.$ZodType;

/** `schema` without its optional, nullable, default and pipe wrappers. */
function unwrap(schema: Schema): Schema {
  const def = schema._zod.def as { type: string; innerType?: Schema; in?: Schema };
  if (def.innerType) return unwrap(def.innerType);
  if (def.type === 'pipe' && def.in) return unwrap(def.in);
  return schema;
}

/** The field names of the object that `schema` expects at `path` (through arrays), or none. */
function fieldsAt(schema: Schema, path: readonly PropertyKey[]): string[] {
  let at: Schema | undefined = unwrap(schema);
  for (const step of path) {
    const def = at._zod.def as { type: string; shape?: Record<string, Schema>; element?: Schema };
    const next: Schema | undefined = def.type === 'object' ? def.shape?.[String(step)] : def.element;
    if (!next) return [];
    at = unwrap(next);
  }
  const def = at._zod.def as { type: string; shape?: Record<string, Schema> };
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** `unknown field "tag"; did you mean "tags"?`: what a client that misspelt a field reads. */
export function unknownFieldMessage(name: string, known: readonly string[]): string {
  const near = closestName(name, known);
  return `unknown field "${name}"` + (near === undefined ? '' : `; did you mean "${near}"?`);
}

/**
 * zod issues as the contract's `details.fields` (path such as `to.0`). An unknown field of a
 * strict object is one entry per field, named by its own path (`emails.3.tag`), with the
 * closest field `schema` knows there when one is near.
 */
export function fieldErrors(error: z.ZodError, schema?: Schema): FieldError[] {
  return error.issues.flatMap((i): FieldError[] => {
    const at = i.path.map(String);
    if (i.code !== 'unrecognized_keys') return [{ field: at.join('.'), message: i.message, code: i.code }];
    const known = schema ? fieldsAt(schema, i.path) : [];
    return i.keys.map((key) => ({
      field: [...at, key].join('.'),
      message: unknownFieldMessage(key, known),
      code: i.code,
    }));
  });
}

/** Parses `input` with `schema` or throws 422 request_validation_failed with the field list. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new AppError('request_validation_failed', 'The request failed validation', {
    fields: fieldErrors(r.error, schema),
  });
}

/** 422 request_validation_failed naming one field, for a rule a schema cannot state (it needs the clock or the store). */
export function fieldError(field: string, message: string): AppError {
  return new AppError('request_validation_failed', 'The request failed validation', {
    fields: [{ field, message, code: 'invalid_value' }],
  });
}
