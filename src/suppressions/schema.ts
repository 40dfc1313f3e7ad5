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
  format: z.enum(['json', 'csv']).default('json'),
});
