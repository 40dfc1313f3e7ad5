import { z } from 'zod';
import {
  acceptInvitationSchema,
  createProjectSchema,
  inviteSchema,
  memberRoleSchema,
  newOrgSchema,
  updateOrgSchema,
  updateProjectSchema,
} from '../accounts/schema.ts';
import { listAuditQuerySchema, writeAuditCsv } from '../audit/index.ts';
import { parseInput } from '../validation.ts';
import { bearer, sessionOf } from './auth.ts';
import type { Handler } from './handler.ts';
import * as out from './management-schemas.ts';
import { documented, memberHandler, sendCsv } from './org-route.ts';

/** Organizations, their projects, members, invitations and audit log (contract, "Authentication" 7-8). */

// The organizations the signed-in user belongs to, with the user's role in each.
export const listOrganizations = documented<Handler>(
  { summary: 'Organizations of the signed-in user', response: z.array(out.memberOrganizationOut) },
  async (req, _reply, { app }) => ({ data: await app.accounts.listOrgsOfUser(sessionOf(req).user_id) }),
);

// Any signed-in user may start an organization, and owns it.
export const createOrganization = documented<Handler>(
  { summary: 'Create an organization (the creator owns it)', body: newOrgSchema, response: out.memberOrganizationOut },
  async (req, reply, { app }) => {
    const { user_id } = sessionOf(req);
    const org = await app.accounts.createOrgOwnedBy(user_id, req.body, { type: 'user', user_id, ip: req.ip });
    return reply.code(201).send({ data: { ...org, role: 'OWNER' } });
  },
);

export const getOrganization = memberHandler(
  { summary: 'An organization', response: out.memberOrganizationOut },
  ({ org, role }) => Promise.resolve({ ...org, role }),
);

export const updateOrganization = memberHandler(
  {
    summary: "Rename an organization (its plan is the server operator's: `plan` is 403 forbidden)",
    body: updateOrgSchema,
    response: out.memberOrganizationOut,
  },
  async ({ org, role, body, actor }, app) => ({ ...(await app.accounts.updateOrg(org.id, body, actor)), role }),
);

export const deleteOrganization = memberHandler(
  { summary: 'Delete an organization and all it holds' },
  ({ org, actor }, app) => app.accounts.deleteOrg(org.id, actor),
);

export const signDpa = memberHandler(
  { summary: 'Sign the data-processing agreement (needed for LIVE keys)', response: out.organizationOut },
  ({ org, user_id, actor }, app) => app.accounts.signDpa(org.id, user_id, actor),
);

export const createProject = memberHandler(
  { summary: 'Create a project', body: createProjectSchema, response: out.projectOut },
  ({ org, body, actor }, app) => app.accounts.createProject(org.id, body, actor),
);

export const updateProject = memberHandler(
  { summary: 'Rename a project; `settings` is merged', body: updateProjectSchema, response: out.projectOut },
  ({ params, body, actor }, app) => app.accounts.updateProject(params.project_id!, body, actor),
);

export const deleteProject = memberHandler({ summary: 'Delete a project' }, ({ params, actor }, app) =>
  app.accounts.deleteProject(params.project_id!, actor),
);

export const listProjects = memberHandler({ summary: 'Projects', response: z.array(out.projectOut) }, ({ org }, app) =>
  app.accounts.listProjects(org.id),
);

export const getProject = memberHandler({ summary: 'A project', response: out.projectOut }, ({ params }, app) =>
  app.accounts.getProjectById(params.project_id!),
);

export const listMembers = memberHandler({ summary: 'Members', response: z.array(out.memberOut) }, ({ org }, app) =>
  app.accounts.listMembers(org.id),
);

export const changeMemberRole = memberHandler(
  { summary: "Change a member's role", body: memberRoleSchema, response: out.memberOut },
  ({ org, params, body, role, actor }, app) => app.members.changeMemberRole(org.id, params.user_id!, body, role, actor),
);

export const removeMember = memberHandler({ summary: 'Remove a member' }, ({ org, params, role, actor }, app) =>
  app.members.removeMember(org.id, params.user_id!, role, actor),
);

export const inviteMember = memberHandler(
  { summary: 'Invite an address (the token is shown once)', body: inviteSchema, response: out.invitationOut },
  ({ org, body, user_id, role, actor }, app) => app.members.invite(org.id, body, { user_id, role }, actor),
);

export const listInvitations = memberHandler(
  {
    summary: 'Invitations not accepted yet and not expired (without their tokens)',
    response: z.array(out.invitationOut.omit({ token: true })),
  },
  ({ org }, app) => app.members.listInvitations(org.id),
);

export const revokeInvitation = memberHandler(
  { summary: 'Revoke an invitation not accepted yet: its link stops working' },
  ({ org, params, actor }, app) => app.members.revokeInvitation(org.id, params.invitation_id!, actor),
);

// The invitee: signed in (its address must be the invited one), or new, with a password.
export const acceptInvitation = documented<Handler>(
  {
    summary: 'Accept an invitation (signed in, or signing up with a password)',
    body: acceptInvitationSchema,
    response: out.memberOut,
  },
  async (req, reply, { app }) => {
    const token = bearer(req);
    const session = token === undefined ? undefined : await app.sessions.authenticate(token);
    const invitation = (req.params as { token: string }).token;
    const member = await app.members.acceptInvitation(invitation, session, req.body, req.ip);
    return reply.code(201).send({ data: member });
  },
);

export const listAuditLogs = memberHandler(
  {
    summary: 'The audit log, newest first (`format=csv` streams all of it)',
    query: listAuditQuerySchema,
    response: z.array(out.auditLogOut),
    csv: true,
  },
  async ({ org, query, reply }, app) => {
    const q = parseInput(listAuditQuerySchema, query);
    if (q.format === 'csv') return sendCsv(reply, 'audit-log.csv', writeAuditCsv(app.audit.iterate(org.id)));
    return app.audit.list(org.id, q.before, q.limit);
  },
);
