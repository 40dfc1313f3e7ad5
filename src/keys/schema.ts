import { z } from 'zod';

export const PERMISSIONS = ['FULL_ACCESS', 'SENDING_ONLY', 'READ_ONLY'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export const ENVS = ['LIVE', 'TEST'] as const;
export type KeyEnv = (typeof ENVS)[number];

/** Environment prefixes fix the key's environment (contract, Authentication 2). */
export const KEY_PREFIX: Record<KeyEnv, string> = { LIVE: 'svc_live_', TEST: 'svc_test_' };

export const createKeySchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  permissions: z.enum(PERMISSIONS).default('FULL_ACCESS'),
  env: z.enum(ENVS).default('LIVE'),
  expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
});

export type CreateKeyInput = z.input<typeof createKeySchema>;

/** GET …/api-keys (contract: `include_revoked`, bool, default false). */
export const listKeysQuerySchema = z.strictObject({
  include_revoked: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});
