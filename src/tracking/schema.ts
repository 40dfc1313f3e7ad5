import { z } from 'zod';

/** Limits of click and open tracking (not in the contract). */
export const TRACKING_LIMITS = {
  /** Links longer than this (UTF-8 bytes) stay untracked: the token carries the URL, and long links get cut by mail clients. */
  urlBytes: 2048,
  /** A token of the longest tracked URL is under 2,800 characters; anything longer is not ours. */
  tokenChars: 4096,
  /** A stored user agent is cut to this many characters. */
  userAgentChars: 512,
} as const;

/** Project settings that tracking reads (decisions.md, "Project settings"). */
export interface TrackingSettings {
  click_tracking: boolean;
  open_tracking: boolean;
  one_click_unsubscribe: boolean;
}

/** Who followed a link or loaded the pixel, as the HTTP door saw them. */
export const visitorSchema = z.object({
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; store the IPv4 form.
  ip: z
    .string()
    .transform((ip) => ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, ''))
    .nullable(),
  user_agent: z
    .string()
    .transform((ua) => ua.slice(0, TRACKING_LIMITS.userAgentChars) || null)
    .nullable(),
});

export type Visitor = z.input<typeof visitorSchema>;
