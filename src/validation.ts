import type { z } from 'zod';
import { AppError } from './errors.ts';

export interface FieldError {
  field: string;
  message: string;
  code: string;
}

/** zod issues as the contract's `details.fields` (path such as `to.0`). */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((i) => ({
    field: i.path.map(String).join('.'),
    message: i.message,
    code: i.code,
  }));
}

/** Parses `input` with `schema` or throws 422 request_validation_failed with the field list. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new AppError('request_validation_failed', 'The request failed validation', { fields: fieldErrors(r.error) });
}
