import { z } from 'zod';
import { PLANS } from '../limits/index.ts';

export const ROLES = ['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

export const emailAddress = z.email({ message: 'must be an email address' }).max(320);

export const createUserSchema = z.strictObject({
  email: emailAddress,
  password: z.string().min(8, 'must be at least 8 characters').max(1024),
});

export const createOrgSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  owner_email: emailAddress,
  plan: z.enum(PLANS).optional(),
});

export const createProjectSchema = z.strictObject({ name: z.string().trim().min(1).max(200) });

/** POST /v1/organizations: the signed-in user owns it; its plan is the server's default. */
export const newOrgSchema = z.strictObject({ name: z.string().trim().min(1).max(200) });

/** PATCH /v1/organizations/{id}: a new name, a new plan, or both. */
export const updateOrgSchema = z
  .strictObject({ name: z.string().trim().min(1).max(200).optional(), plan: z.enum(PLANS).optional() })
  .refine((v) => v.name !== undefined || v.plan !== undefined, 'give name or plan');

/** PATCH …/projects/{id}: a new name, settings merged into the project's (contract), or both. */
export const updateProjectSchema = z
  .strictObject({ name: z.string().trim().min(1).max(200).optional(), settings: z.unknown().optional() })
  .refine((v) => v.name !== undefined || v.settings !== undefined, 'give name or settings');

export const addMemberSchema = z.strictObject({ email: emailAddress, role: z.enum(ROLES) });

export const planSchema = z.enum(PLANS);

/** Known project settings and their defaults (decisions.md, "Project settings"). */
export const PROJECT_SETTING_DEFAULTS = {
  click_tracking: false,
  open_tracking: false,
  /** List-Unsubscribe with a one-click URL (RFC 8058) on every LIVE email to a single recipient. */
  one_click_unsubscribe: false,
  /**
   * Click and open tracking on mail from the SMTP relay too (issue 33). Off, a relayed message
   * passes through as written; on, its HTML must be rewritten, so svc rebuilds the message.
   */
  relay_tracking: false,
} as const;
export type ProjectSettings = { -readonly [K in keyof typeof PROJECT_SETTING_DEFAULTS]: boolean };

/** A settings change: known keys only, merged into what is stored (unknown keys are refused). */
export const projectSettingsSchema = z.strictObject({
  click_tracking: z.boolean().optional(),
  open_tracking: z.boolean().optional(),
  one_click_unsubscribe: z.boolean().optional(),
  relay_tracking: z.boolean().optional(),
});

/** PATCH …/members/{user_id}. */
export const memberRoleSchema = z.strictObject({ role: z.enum(ROLES) });

/** POST …/invitations. */
export const inviteSchema = z.strictObject({ email: emailAddress, role: z.enum(ROLES) });

/** POST /v1/invitations/{token}/accept without a session: the invitee's password for a new account. */
export const acceptInvitationSchema = z.strictObject({
  password: z.string().min(8, 'must be at least 8 characters').max(1024),
});

/** An invitation is valid 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
export const INVITATION_PREFIX = 'svc_inv_';
/** What revoking an invitation that is accepted, expired or unknown answers (404). */
export const NO_PENDING_INVITATION = 'No such pending invitation';
