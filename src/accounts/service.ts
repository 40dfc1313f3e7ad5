import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId, isUuid, randomToken, sha256Hex } from '../lib/ids.ts';
import { hashPassword } from '../lib/password.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import { parseInput } from '../validation.ts';
import type { Plan } from '../limits/plans.ts';
import type { AccountsRepo, OrgRow, ProjectRow, MemberRow } from './repo.ts';
import {
  addMemberSchema,
  createOrgSchema,
  createProjectSchema,
  createUserSchema,
  newOrgSchema,
  memberRoleSchema,
  inviteSchema,
  acceptInvitationSchema,
  INVITATION_TTL_MS,
  INVITATION_PREFIX,
  updateOrgSchema,
  updateProjectSchema,
  planSchema,
  projectSettingsSchema,
  PROJECT_SETTING_DEFAULTS,
  type ProjectSettings,
  type Role,
} from './schema.ts';

export interface AccountsDeps {
  repo: AccountsRepo;
  clock: Clock;
  defaultPlan: Plan;
}

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  dpa_accepted_at: string | null;
  created_at: string;
}

export interface Project {
  id: string;
  organization_id: string;
  name: string;
  settings: Record<string, unknown>;
  created_at: string;
}

export interface Member {
  organization_id: string;
  user_id: string;
  email: string;
  role: string;
  created_at: string;
}

export function toOrganization(o: OrgRow): Organization {
  return { id: o.id, name: o.name, plan: o.plan, dpa_accepted_at: o.dpa_accepted_at, created_at: o.created_at };
}

/** The project with its settings: what is stored over the defaults of the known keys. */
export function toProject(p: ProjectRow): Project {
  return { ...p, settings: { ...PROJECT_SETTING_DEFAULTS, ...(JSON.parse(p.settings) as Record<string, unknown>) } };
}

/** A settings change with known keys only; unknown keys are refused by name (decisions.md). */
function parseSettings(input: unknown): { [K in keyof ProjectSettings]?: boolean | undefined } {
  const keys = input !== null && typeof input === 'object' && !Array.isArray(input) ? Object.keys(input) : [];
  const unknown = keys.filter((k) => !Object.hasOwn(PROJECT_SETTING_DEFAULTS, k));
  if (unknown.length) {
    throw new AppError('request_validation_failed', `Unknown project settings: ${unknown.join(', ')}`, {
      fields: unknown.map((field) => ({ field, message: 'is not a project setting', code: 'unrecognized_keys' })),
    });
  }
  return parseInput(projectSettingsSchema, input);
}

const toMember = (m: MemberRow): Member => ({ ...m });

/** Users, organizations, projects and members: the operator's use cases. */
export function createAccountsService({ repo, clock, defaultPlan }: AccountsDeps) {
  const now = () => iso(clock.now());
  /** The audit row of a change to `target` (an organization or a project) by `actor`. */
  const change = (
    actor: Actor,
    action: string,
    target: { organization_id: string; project_id?: string; type: string; id: string },
    before: unknown,
    after: unknown,
  ): Audited => ({
    actor,
    atMs: clock.now(),
    entry: {
      action,
      organization_id: target.organization_id,
      ...(target.project_id ? { project_id: target.project_id } : {}),
      target_type: target.type,
      target_id: target.id,
      before,
      after,
    },
  });
  const orgTarget = (o: { id: string }) => ({ organization_id: o.id, type: 'organization', id: o.id });
  const projectTarget = (p: ProjectRow) => ({
    organization_id: p.organization_id,
    project_id: p.id,
    type: 'project',
    id: p.id,
  });

  async function getMember(orgId: string, userId: string): Promise<MemberRow> {
    const member = isUuid(userId) ? await repo.findMember(orgId, userId) : undefined;
    if (!member) throw new AppError('not_found', `no member ${userId}`);
    return member;
  }

  async function getUserByEmail(email: string) {
    const user = await repo.findUserByEmail(email);
    if (!user) throw new AppError('not_found', `no user with email ${email}`);
    return user;
  }

  /** Finds an organization by id or unique name. */
  async function getOrg(ref: string): Promise<OrgRow> {
    const org = (isUuid(ref) ? await repo.findOrgById(ref) : undefined) ?? (await repo.findOrgByName(ref));
    if (!org) throw new AppError('not_found', `no organization ${ref}`);
    return org;
  }

  /** Finds a project by id, or by a name that is unique (within `orgRef` when given). */
  async function getProject(ref: string, orgRef?: string): Promise<ProjectRow> {
    const byId = isUuid(ref) ? await repo.findProjectById(ref) : undefined;
    if (byId) return byId;
    let matches = await repo.listProjectsByName(ref);
    if (orgRef) {
      const org = await getOrg(orgRef);
      matches = matches.filter((p) => p.organization_id === org.id);
    }
    if (matches.length === 0) throw new AppError('not_found', `no project ${ref}`);
    if (matches.length > 1) throw new AppError('conflict', `project name ${ref} is ambiguous: use its id`);
    return matches[0]!;
  }

  return {
    getOrg,
    getProject,
    getUserByEmail,

    /** A project as the API shows it. */
    async getProjectById(id: string): Promise<Project> {
      return toProject(await getProject(id));
    },

    /** Creates a user with a scrypt-hashed password. */
    async createUser(input: { email: string; password: string }) {
      const { email, password } = parseInput(createUserSchema, input);
      const user = { id: newId(clock.now()), email, password_hash: await hashPassword(password), created_at: now() };
      await uniqueOrConflict(repo.createUser(user), `a user with email ${email} exists`);
      return { id: user.id, email: user.email };
    },

    /** Creates an organization owned by an existing user. */
    async createOrg(
      input: { name: string; owner_email: string; plan?: Plan | undefined },
      actor: Actor = operator(),
    ): Promise<Organization> {
      const data = parseInput(createOrgSchema, input);
      const owner = await getUserByEmail(data.owner_email);
      const org = { id: newId(clock.now()), name: data.name, plan: data.plan ?? defaultPlan, created_at: now() };
      const shown = toOrganization({ ...org, dpa_accepted_at: null } as OrgRow);
      await uniqueOrConflict(
        repo.createOrgWithOwner(org, owner.id, change(actor, 'organization.create', orgTarget(org), null, shown)),
        `an organization named ${data.name} exists`,
      );
      return toOrganization((await repo.findOrgById(org.id))!);
    },

    /** Creates an organization on the server's default plan, owned by the signed-in user. */
    async createOrgOwnedBy(userId: string, input: unknown, actor: Actor): Promise<Organization> {
      const user = await repo.findUserById(userId);
      if (!user) throw new AppError('unauthorized');
      const { name } = parseInput(newOrgSchema, input);
      return this.createOrg({ name, owner_email: user.email }, actor);
    },

    /** Renames an organization or changes its plan (its ceilings apply from the next request). */
    async updateOrg(orgId: string, input: unknown, actor: Actor = operator()): Promise<Organization> {
      const before = await getOrg(orgId);
      const data = parseInput(updateOrgSchema, input);
      const after = toOrganization({ ...before, name: data.name ?? before.name, plan: data.plan ?? before.plan });
      const audit = change(actor, 'organization.update', orgTarget(before), toOrganization(before), after);
      await uniqueOrConflict(repo.updateOrg(before.id, data, audit), `an organization named ${data.name} exists`);
      return toOrganization((await repo.findOrgById(before.id))!);
    },

    /** Deletes an organization and everything in it. */
    async deleteOrg(orgId: string, actor: Actor = operator()): Promise<void> {
      const org = await getOrg(orgId);
      await repo.deleteOrg(org.id, change(actor, 'organization.delete', orgTarget(org), toOrganization(org), null));
    },

    async listOrgs(): Promise<Organization[]> {
      return (await repo.listOrgs()).map(toOrganization);
    },

    /** The organizations a user is a member of, with the user's role in each. */
    async listOrgsOfUser(userId: string): Promise<(Organization & { role: Role })[]> {
      return (await repo.listOrgsOfUser(userId)).map((o) => ({ ...toOrganization(o), role: o.role }));
    },

    async countOrgs(): Promise<number> {
      return repo.countOrgs();
    },

    /** Changes an organization's plan (its ceilings apply from the next request). */
    async setPlan(orgRef: string, plan: string, actor: Actor = operator()): Promise<Organization> {
      const org = await getOrg(orgRef);
      return this.updateOrg(org.id, { plan: parseInput(planSchema, plan) }, actor);
    },

    /** Records that a member signed the data-processing agreement, which LIVE sending requires. */
    async acceptDpa(orgRef: string, userEmail: string, actor: Actor = operator()): Promise<Organization> {
      const org = await getOrg(orgRef);
      const user = await getUserByEmail(userEmail);
      const member = await repo.findMember(org.id, user.id);
      if (!member || (member.role !== 'OWNER' && member.role !== 'ADMIN')) {
        throw new AppError('forbidden', `${userEmail} must be an OWNER or ADMIN of ${org.name} to accept the DPA`);
      }
      const at = now();
      const after = toOrganization({ ...org, dpa_accepted_at: at });
      const audit = change(actor, 'organization.accept_dpa', orgTarget(org), toOrganization(org), after);
      await repo.acceptDpa(org.id, user.id, at, audit);
      return toOrganization((await repo.findOrgById(org.id))!);
    },

    async createProject(orgRef: string, input: unknown, actor: Actor = operator()): Promise<Project> {
      const org = await getOrg(orgRef);
      const { name } = parseInput(createProjectSchema, input);
      const p = { id: newId(clock.now()), organization_id: org.id, name, created_at: now() };
      const audit = change(actor, 'project.create', projectTarget({ ...p, settings: '{}' }), null, { ...p });
      await uniqueOrConflict(repo.createProject(p, audit), `project ${name} exists in ${org.name}`);
      return toProject((await repo.findProjectById(p.id))!);
    },

    /**
     * Renames a project and merges known settings into its own (contract: the
     * `settings` object is merged into the existing ones; unknown keys are refused).
     */
    async updateProject(projectId: string, input: unknown, actor: Actor = operator()): Promise<Project> {
      const project = await getProject(projectId);
      const { name, settings } = parseInput(updateProjectSchema, input);
      const patch = settings === undefined ? {} : parseSettings(settings);
      const merged = { ...(JSON.parse(project.settings) as object), ...patch };
      const after = { ...toProject(project), ...(name === undefined ? {} : { name }), settings: merged };
      const audit = change(actor, 'project.update', projectTarget(project), toProject(project), after);
      const settingsPatch = Object.keys(patch).length ? { settingsPatch: JSON.stringify(patch) } : {};
      await uniqueOrConflict(
        repo.updateProject(project.id, { name, ...settingsPatch }, audit),
        `project ${name} exists in this organization`,
      );
      return toProject((await repo.findProjectById(project.id))!);
    },

    /** Merges known settings (click_tracking, open_tracking) into a project's; keys not sent are kept. */
    async updateProjectSettings(
      projectRef: string,
      settings: unknown,
      orgRef?: string,
      actor: Actor = operator(),
    ): Promise<Project> {
      const project = await getProject(projectRef, orgRef);
      return this.updateProject(project.id, { settings }, actor);
    },

    /** Deletes a project with its keys, templates, suppressions and emails. */
    async deleteProject(projectId: string, actor: Actor = operator()): Promise<void> {
      const p = await getProject(projectId);
      await repo.deleteProject(p.id, change(actor, 'project.delete', projectTarget(p), toProject(p), null));
    },

    /** The effective settings of a project (defaults for keys never set): what delivery reads. */
    async getProjectSettings(projectId: string): Promise<ProjectSettings> {
      const row = await repo.findProjectById(projectId);
      const stored = row ? (JSON.parse(row.settings) as Partial<ProjectSettings>) : {};
      return { ...PROJECT_SETTING_DEFAULTS, ...stored };
    },

    async listProjects(orgRef: string): Promise<Project[]> {
      const org = await getOrg(orgRef);
      return (await repo.listProjects(org.id)).map(toProject);
    },

    async addMember(
      orgRef: string,
      input: { email: string; role: string },
      actor: Actor = operator(),
    ): Promise<Member> {
      const org = await getOrg(orgRef);
      const { email, role } = parseInput(addMemberSchema, input);
      const user = await getUserByEmail(email);
      const at = now();
      const target = { organization_id: org.id, type: 'member', id: user.id };
      const audit = change(actor, 'member.add', target, null, { user_id: user.id, email, role, created_at: at });
      await uniqueOrConflict(repo.addMember(org.id, user.id, role, at, audit), `${email} is already a member`);
      return toMember((await repo.findMember(org.id, user.id))!);
    },

    async listMembers(orgRef: string): Promise<Member[]> {
      const org = await getOrg(orgRef);
      return (await repo.listMembers(org.id)).map(toMember);
    },

    /** Changes a member's role; only an OWNER grants or takes the OWNER role, and the last OWNER stays. */
    async changeMemberRole(orgId: string, userId: string, input: unknown, by: Role, actor: Actor): Promise<Member> {
      const { role } = parseInput(memberRoleSchema, input);
      const member = await getMember(orgId, userId);
      if ((role === 'OWNER' || member.role === 'OWNER') && by !== 'OWNER') {
        throw new AppError('forbidden', 'Only an OWNER grants or takes the OWNER role');
      }
      const target = { organization_id: orgId, type: 'member', id: userId };
      const audit = change(actor, 'member.update', target, toMember(member), { ...toMember(member), role });
      await repo.setMemberRole(orgId, userId, role, audit);
      return toMember(await getMember(orgId, userId));
    },

    /** Removes a member; only an OWNER removes an OWNER, and the last OWNER stays. */
    async removeMember(orgId: string, userId: string, by: Role, actor: Actor): Promise<void> {
      const member = await getMember(orgId, userId);
      if (member.role === 'OWNER' && by !== 'OWNER') throw new AppError('forbidden', 'Only an OWNER removes an OWNER');
      const target = { organization_id: orgId, type: 'member', id: userId };
      await repo.removeMember(orgId, userId, change(actor, 'member.remove', target, toMember(member), null));
    },

    /**
     * Invites an address to the organization with a role (an OWNER invitation
     * needs an OWNER). The token is in the result only; it is valid 7 days.
     */
    async invite(orgId: string, input: unknown, by: { user_id: string; role: Role }, actor: Actor) {
      const { email, role } = parseInput(inviteSchema, input);
      if (role === 'OWNER' && by.role !== 'OWNER') throw new AppError('forbidden', 'Only an OWNER invites an OWNER');
      const token = INVITATION_PREFIX + randomToken(32);
      const row = {
        id: newId(clock.now()),
        organization_id: orgId,
        email,
        role,
        token_hash: sha256Hex(token),
        invited_by: by.user_id,
        created_at: now(),
        expires_at: iso(clock.now() + INVITATION_TTL_MS),
      };
      const { token_hash: _h, ...shown } = row;
      const target = { organization_id: orgId, type: 'invitation', id: row.id };
      await repo.createInvitation(row, change(actor, 'invitation.create', target, null, shown));
      return { ...shown, token };
    },

    /**
     * Accepts an invitation: a signed-in user whose address it names joins the
     * organization; without a session, a `password` makes the account for that
     * address first (the invitee's sign-up). Unknown or expired: 404.
     */
    async acceptInvitation(token: string, session: { user_id: string } | undefined, body: unknown, ip: string | null) {
      const invitation = token.startsWith(INVITATION_PREFIX)
        ? await repo.findInvitationByHash(sha256Hex(token))
        : undefined;
      if (!invitation || invitation.expires_at <= now())
        throw new AppError('not_found', 'No such invitation, or it expired');
      let user = session ? await repo.findUserById(session.user_id) : await repo.findUserByEmail(invitation.email);
      if (session && user?.email.toLowerCase() !== invitation.email.toLowerCase()) {
        throw new AppError('forbidden', `This invitation is for ${invitation.email}`);
      }
      if (!session) {
        if (user) throw new AppError('conflict', `${invitation.email} has an account: sign in, then accept`);
        const { password } = parseInput(acceptInvitationSchema, body ?? {});
        await this.createUser({ email: invitation.email, password });
        user = (await repo.findUserByEmail(invitation.email))!;
      }
      const actor: Actor = { type: 'user', user_id: user!.id, ip };
      const target = { organization_id: invitation.organization_id, type: 'member', id: user!.id };
      const after = { user_id: user!.id, email: user!.email, role: invitation.role };
      await uniqueOrConflict(
        repo.acceptInvitation(invitation, user!.id, now(), change(actor, 'invitation.accept', target, null, after)),
        `${user!.email} is already a member`,
      );
      return toMember((await repo.findMember(invitation.organization_id, user!.id))!);
    },

    /**
     * What `userId` may do in organization `orgId` (and, given, its project
     * `projectId`): the user's role, or 404 when the user is not a member or the
     * project is not the organization's, so another organization's resources
     * cannot even be told to exist (no existence oracle).
     */
    async accessTo(userId: string, orgId: string, projectId?: string): Promise<{ role: Role; org: Organization }> {
      const member = isUuid(orgId) ? await repo.findMember(orgId, userId) : undefined;
      const org = member && (await repo.findOrgById(orgId));
      if (!member || !org) throw new AppError('not_found', `no organization ${orgId}`);
      if (projectId !== undefined) {
        const project = isUuid(projectId) ? await repo.findProjectById(projectId) : undefined;
        if (project?.organization_id !== orgId) throw new AppError('not_found', `no project ${projectId}`);
      }
      return { role: member.role, org: toOrganization(org) };
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
