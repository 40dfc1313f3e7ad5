import { z } from 'zod';
import { emailAddress } from '../accounts/schema.ts';

export const SUPPRESSION_REASONS = ['HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE', 'MANUAL'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const addSuppressionSchema = z.object({
  email: emailAddress,
  reason: z.enum(SUPPRESSION_REASONS).default('MANUAL'),
});

export interface Suppression {
  email: string;
  reason: SuppressionReason;
  project_id: string;
  created_at: string;
}
