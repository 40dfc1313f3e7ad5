import type { Role } from './schema.ts';

/** Each role can do all that the roles after it can (contract, "Authentication" 8). */
const RANK: Record<Role, number> = { OWNER: 3, ADMIN: 2, DEVELOPER: 1, VIEWER: 0 };

/** Whether `role` is at least `min`. */
export const hasRole = (role: Role, min: Role): boolean => RANK[role] >= RANK[min];

const ORG = '/v1/organizations/:organization_id';
const PROJECT = `${ORG}/projects/:project_id`;

/**
 * The least role of every Management API endpoint under an organization: the
 * contract's endpoint table where it names one (a test compares them row by
 * row), else its role matrix as decisions.md reads it: VIEWER reads; DEVELOPER
 * also writes keys, templates, webhooks and suppressions (and, as the endpoint
 * table says, deletes keys, templates and webhooks); ADMIN also writes projects,
 * domains and members; OWNER also the organization itself, its plan and its DPA.
 * Audit logs are read by ADMIN: they show every member's actions and addresses.
 */
export const MIN_ROLE: Readonly<Record<string, Role>> = {
  [`GET ${ORG}`]: 'VIEWER',
  [`PATCH ${ORG}`]: 'OWNER',
  [`DELETE ${ORG}`]: 'OWNER',
  [`POST ${ORG}/legal/dpa`]: 'OWNER',
  [`GET ${ORG}/usage`]: 'VIEWER',
  [`GET ${ORG}/audit-logs`]: 'ADMIN',

  [`GET ${ORG}/members`]: 'VIEWER',
  [`PATCH ${ORG}/members/:user_id`]: 'ADMIN',
  [`DELETE ${ORG}/members/:user_id`]: 'ADMIN',
  [`POST ${ORG}/invitations`]: 'ADMIN',
  [`GET ${ORG}/invitations`]: 'VIEWER',
  [`DELETE ${ORG}/invitations/:invitation_id`]: 'ADMIN',

  [`GET ${ORG}/domains`]: 'VIEWER',
  [`POST ${ORG}/domains`]: 'ADMIN',
  [`GET ${ORG}/domains/:domain_id`]: 'VIEWER',
  [`DELETE ${ORG}/domains/:domain_id`]: 'ADMIN',
  [`POST ${ORG}/domains/:domain_id/verify`]: 'ADMIN',
  [`POST ${ORG}/domains/:domain_id/rotate-dkim`]: 'ADMIN',
  [`PATCH ${ORG}/domains/:domain_id`]: 'ADMIN',
  [`GET ${ORG}/domains/:domain_id/reports`]: 'VIEWER',

  [`GET ${ORG}/projects`]: 'VIEWER',
  [`POST ${ORG}/projects`]: 'ADMIN',
  [`GET ${PROJECT}`]: 'VIEWER',
  [`PATCH ${PROJECT}`]: 'ADMIN',
  [`DELETE ${PROJECT}`]: 'ADMIN',
  [`POST ${PROJECT}/domains/:domain_id`]: 'ADMIN',
  [`DELETE ${PROJECT}/domains/:domain_id`]: 'ADMIN',

  [`POST ${PROJECT}/api-keys`]: 'DEVELOPER',
  [`GET ${PROJECT}/api-keys`]: 'DEVELOPER',
  [`DELETE ${PROJECT}/api-keys/:key_id`]: 'DEVELOPER',

  [`GET ${PROJECT}/templates`]: 'VIEWER',
  [`POST ${PROJECT}/templates`]: 'DEVELOPER',
  [`GET ${PROJECT}/templates/:template_id`]: 'VIEWER',
  [`PATCH ${PROJECT}/templates/:template_id`]: 'DEVELOPER',
  [`DELETE ${PROJECT}/templates/:template_id`]: 'DEVELOPER',
  // The dashboard's editor (issue 31): a preview reads (it stores nothing); a test send sends.
  [`POST ${PROJECT}/templates/preview`]: 'VIEWER',
  [`POST ${PROJECT}/templates/:template_id/test-send`]: 'DEVELOPER',
  // Versions (issue 35): read as the template, published as it is changed.
  [`GET ${PROJECT}/templates/:template_id/versions`]: 'VIEWER',
  [`GET ${PROJECT}/templates/:template_id/versions/:version`]: 'VIEWER',
  [`POST ${PROJECT}/templates/:template_id/publish`]: 'DEVELOPER',

  [`GET ${PROJECT}/webhooks`]: 'VIEWER',
  [`POST ${PROJECT}/webhooks`]: 'DEVELOPER',
  [`GET ${PROJECT}/webhooks/:webhook_id`]: 'VIEWER',
  [`PATCH ${PROJECT}/webhooks/:webhook_id`]: 'DEVELOPER',
  [`POST ${PROJECT}/webhooks/:webhook_id/rotate-secret`]: 'DEVELOPER',
  [`POST ${PROJECT}/webhooks/:webhook_id/test`]: 'DEVELOPER',
  [`GET ${PROJECT}/webhooks/:webhook_id/deliveries`]: 'VIEWER',
  [`GET ${PROJECT}/webhooks/:webhook_id/deliveries/:delivery_id`]: 'VIEWER',
  [`POST ${PROJECT}/webhooks/:webhook_id/deliveries/:delivery_id/redeliver`]: 'DEVELOPER',
  [`DELETE ${PROJECT}/webhooks/:webhook_id`]: 'DEVELOPER',

  [`GET ${PROJECT}/suppressions`]: 'VIEWER',
  [`POST ${PROJECT}/suppressions`]: 'DEVELOPER',
  [`DELETE ${PROJECT}/suppressions/:email`]: 'DEVELOPER',
  [`POST ${PROJECT}/suppressions/import`]: 'DEVELOPER',

  [`GET ${PROJECT}/stats`]: 'VIEWER',
  [`GET ${PROJECT}/emails`]: 'VIEWER',
  [`GET ${PROJECT}/emails/:email_id`]: 'VIEWER',
  [`GET ${PROJECT}/emails/:email_id/attachments/:position`]: 'VIEWER',
  [`POST ${PROJECT}/emails/:email_id/resend`]: 'DEVELOPER',
  [`POST ${PROJECT}/emails/:email_id/cancel`]: 'DEVELOPER',
  [`PATCH ${PROJECT}/emails/:email_id`]: 'DEVELOPER',

  // Receiving mail (issue 34): routes are written as webhooks are; received mail is read as emails.
  [`GET ${PROJECT}/routes`]: 'VIEWER',
  [`POST ${PROJECT}/routes`]: 'DEVELOPER',
  [`GET ${PROJECT}/routes/:route_id`]: 'VIEWER',
  [`PATCH ${PROJECT}/routes/:route_id`]: 'DEVELOPER',
  [`DELETE ${PROJECT}/routes/:route_id`]: 'DEVELOPER',
  [`GET ${PROJECT}/received-emails`]: 'VIEWER',
  [`GET ${PROJECT}/received-emails/:received_id`]: 'VIEWER',
  [`GET ${PROJECT}/received-emails/:received_id/raw`]: 'VIEWER',
  [`GET ${PROJECT}/received-emails/:received_id/attachments/:index`]: 'VIEWER',
  [`DELETE ${PROJECT}/received-emails/:received_id`]: 'DEVELOPER',
};

/** The least role of `method path` (a route pattern), or undefined for a path outside any organization. */
export function minRoleOf(method: string, path: string): Role | undefined {
  return MIN_ROLE[`${method} ${path}`];
}
