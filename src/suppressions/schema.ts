import { z } from 'zod';
import { emailAddress } from '../accounts/index.ts';

export const SUPPRESSION_REASONS = ['HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE', 'MANUAL'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const addSuppressionSchema = z.strictObject({
  email: emailAddress,
  reason: z.enum(SUPPRESSION_REASONS).default('MANUAL'),
});

export interface Suppression {
  email: string;
  reason: SuppressionReason;
  project_id: string;
  created_at: string;
}

/** GET …/suppressions: a page of the list in address order, after the address `after`; `format=csv` streams it all. */
export const listSuppressionsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().max(320).default(''),
  /** Only addresses containing this text, ignoring case (the search box). */
  q: z.string().max(320).optional(),
  reason: z.enum(SUPPRESSION_REASONS).optional(),
  format: z.enum(['json', 'csv']).default('json'),
});

/** Which entries a list or export covers: all of them, or those matching a search. */
export interface SuppressionFilter {
  /** Addresses containing this text, ignoring case. */
  contains?: string | undefined;
  reason?: SuppressionReason | undefined;
}

/**
 * The filter as both stores bind it: a LIKE pattern for `contains` (its % _ and \ taken
 * literally, with ESCAPE '\'), lower-cased as stored addresses are; null where the filter
 * has no such part.
 */
export function filterParams(f: SuppressionFilter): { like: string | null; reason: string | null } {
  const text = f.contains?.trim().toLowerCase();
  return {
    like: text ? `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null,
    reason: f.reason ?? null,
  };
}
