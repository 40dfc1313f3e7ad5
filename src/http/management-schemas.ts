import { z } from 'zod';
import { ROLES, type Organization, type Project } from '../accounts/index.ts';
import type { Member } from '../accounts/service.ts';
import type { AuditLog } from '../audit/index.ts';
import type { Domain } from '../domains/present.ts';
import { ENVS, PERMISSIONS, type ApiKey } from '../keys/index.ts';
import { PLANS } from '../limits/plans.ts';
import { SUPPRESSION_REASONS, type Suppression } from '../suppressions/schema.ts';
import type { Template } from '../templates/schema.ts';

/**
 * The shapes of `data` in Management API responses, for the OpenAPI document
 * (a test validates every management response against it). Each is checked
 * at compile time against the domain type the use case returns, so the two
 * cannot drift apart.
 */
const time = z.iso.datetime({ offset: true });
const id = z.uuid();

export const organizationOut = z.object({
  id,
  name: z.string(),
  plan: z.enum(PLANS),
  dpa_accepted_at: time.nullable(),
  created_at: time,
});
/** An organization as its member sees it, with the member's role. */
export const memberOrganizationOut = organizationOut.extend({ role: z.enum(ROLES) });

export const projectOut = z.object({
  id,
  organization_id: id,
  name: z.string(),
  settings: z.record(z.string(), z.unknown()),
  created_at: time,
});

export const memberOut = z.object({
  organization_id: id,
  user_id: id,
  email: z.string(),
  role: z.enum(ROLES),
  created_at: time,
});

export const invitationOut = z.object({
  id,
  organization_id: id,
  email: z.string(),
  role: z.enum(ROLES),
  invited_by: id,
  created_at: time,
  expires_at: time,
  /** Shown once, here. */
  token: z.string(),
});

export const apiKeyOut = z.object({
  id,
  project_id: id,
  name: z.string(),
  prefix: z.string(),
  permissions: z.enum(PERMISSIONS),
  env: z.enum(ENVS),
  last_used_at: time.nullable(),
  expires_at: time.nullable(),
  revoked_at: time.nullable(),
  created_at: time,
  /** Only in the answer to its creation. */
  key: z.string().optional(),
});

export const templateOut = z.object({
  id,
  project_id: id,
  name: z.string(),
  slug: z.string(),
  subject_template: z.string(),
  html_template: z.string().nullable(),
  text_template: z.string().nullable(),
  variables: z.record(z.string(), z.unknown()),
  version: z.number().int(),
  published_version: z.number().int(),
  is_layout: z.boolean(),
  layout_id: id.nullable(),
  created_at: time,
  updated_at: time,
});

/** One saved version of a template in the list of its versions (no bodies). */
export const templateVersionSummaryOut = z.object({
  version: z.number().int(),
  published: z.boolean(),
  layout_id: id.nullable(),
  created_at: time,
});

/** One saved version of a template with its content. */
export const templateVersionOut = templateVersionSummaryOut.extend({
  template_id: id,
  subject_template: z.string(),
  html_template: z.string().nullable(),
  text_template: z.string().nullable(),
  variables: z.record(z.string(), z.unknown()),
});

const purpose = z.enum([
  'dkim',
  'dkim-next',
  'dkim-retiring',
  'dkim-retired',
  'spf',
  'return-path',
  'dmarc',
  'inbound',
]);
export const domainOut = z.object({
  id,
  organization_id: id,
  name: z.string(),
  status: z.enum(['PENDING', 'VERIFIED', 'FAILED']),
  dkim_selector: z.string().nullable(),
  dkim_keys: z.array(
    z.object({
      selector: z.string(),
      algorithm: z.enum(['rsa', 'ed25519']),
      state: z.enum(['pending', 'active', 'retiring', 'retired']),
      created_at: time,
      activated_at: time.nullable(),
      retire_after: time.nullable(),
    }),
  ),
  records: z.array(z.object({ type: z.enum(['TXT', 'MX']), name: z.string(), value: z.string(), purpose })),
  checks: z.array(
    z.object({
      type: z.enum(['TXT', 'MX']),
      name: z.string(),
      purpose,
      ok: z.boolean(),
      reason: z.string().nullable(),
      found: z.array(z.string()),
    }),
  ),
  warning: z.string().nullable(),
  failing_since: time.nullable(),
  last_checked_at: time.nullable(),
  verified_at: time.nullable(),
  created_at: time,
  project_ids: z.array(id),
  receiving: z.boolean(),
  receiving_ready: z.boolean(),
});

export const suppressionOut = z.object({
  email: z.string(),
  reason: z.enum(SUPPRESSION_REASONS),
  project_id: id,
  created_at: time,
});

export const auditLogOut = z.object({
  id,
  organization_id: id,
  project_id: id.nullable(),
  actor: z.object({
    type: z.enum(['user', 'cli']),
    id: z.string().nullable(),
    name: z.string().nullable(),
    ip: z.string().nullable(),
  }),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string(),
  before: z.unknown(),
  after: z.unknown(),
  created_at: time,
});

export const tokensOut = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
});

// Compile-time agreement of each schema with what its use case returns
// (`before`/`after` of an audit row are `unknown`, which zod infers as optional).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Agree<T extends true> = T;
export type SchemasAgree = [
  Agree<Same<z.infer<typeof organizationOut>, Organization>>,
  Agree<Same<z.infer<typeof projectOut>, Project>>,
  Agree<Same<Omit<z.infer<typeof memberOut>, 'role'>, Omit<Member, 'role'>>>,
  Agree<Same<Omit<z.infer<typeof apiKeyOut>, 'permissions' | 'env'>, Omit<ApiKey, 'permissions' | 'env'>>>,
  Agree<Same<z.infer<typeof templateOut>, Template>>,
  Agree<Same<z.infer<typeof domainOut>, Domain>>,
  Agree<Same<z.infer<typeof suppressionOut>, Suppression>>,
  Agree<Same<Required<z.infer<typeof auditLogOut>>, AuditLog>>,
];
