import { z } from 'zod';

/** POST /v1/auth/login. */
export const loginSchema = z.strictObject({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
});
export type LoginInput = z.input<typeof loginSchema>;

/** An access token lives 15 minutes (contract, "Endpoints": `expires_in`). */
export const ACCESS_TTL_MS = 15 * 60_000;
/** The refresh cookie lives 30 days, rotated on every use (decisions.md). */
export const REFRESH_TTL_MS = 30 * 24 * 3_600_000;
export const ACCESS_PREFIX = 'svc_at_';
export const REFRESH_PREFIX = 'svc_rt_';
