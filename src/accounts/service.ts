import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId, isUuid } from '../lib/ids.ts';
import { hashPassword, type PasswordCost } from '../lib/password.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { operator, type Actor } from '../audit/index.ts';
import { auditChange } from './audit-change.ts';
import { parseInput } from '../validation.ts';
import type { Plan } from '../limits/index.ts';
import type { AccountsStore, OrgRow, ProjectRow, MemberRow } from './store.ts';
import {
  addMemberSchema,
  createOrgSchema,
  createProjectSchema,
  createUserSchema,
  newOrgSchema,
  updateOrgSchema,
  updateProjectSchema,
  planSchema,
  projectSettingsSchema,
  PROJECT_SETTING_DEFAULTS,
  type ProjectSettings,
  type Role,
} from './schema.ts';

export interface AccountsDeps {
  repo: AccountsStore;
  clock: Clock;
  defaultPlan: Plan;
  /** The scrypt cost of new passwords (lib/password.ts); the server's unless a test asks less. */
  passwordCost?: PasswordCost | undefined;
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

export const toMember = (m: MemberRow): Member => ({ ...m });

/** Users, organizations, projects and members: the operator's use cases. */
export function createAccountsService({ repo, clock, defaultPlan, passwordCost }: AccountsDeps) {
  const now = () => iso(clock.now());
  const change = auditChange(clock);
  const orgTarget = (o: { id: string }) => ({ organization_id: o.id, type: 'organization', id: o.id });
  const projectTarget = (p: ProjectRow) => ({
    organization_id: p.organization_id,
    project_id: p.id,
    type: 'project',
    id: p.id,
  });

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
  /**
   * Only an OWNER signs: the agreement binds the organization (decisions.md,
   * the role table: OWNER alone writes the organization, its plan and its DPA).
   */
  async function signDpa(org: OrgRow, user: { id: string; email: string }, actor: Actor): Promise<Organization> {
    const member = await repo.findMember(org.id, user.id);
    if (member?.role !== 'OWNER') {
      throw new AppError('forbidden', `${user.email} must be an OWNER of ${org.name} to accept the DPA`);
    }
    const at = now();
    const after = toOrganization({ ...org, dpa_accepted_at: at });
    const audit = change(actor, 'organization.accept_dpa', orgTarget(org), toOrganization(org), after);
    await repo.acceptDpa(org.id, user.id, at, audit);
    return toOrganization((await repo.findOrgById(org.id))!);
  }

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
      const user = {
        id: newId(clock.now()),
        email,
        password_hash: await hashPassword(password, passwordCost),
        created_at: now(),
      };
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

    /**
     * Renames an organization or changes its plan (its ceilings apply from the next request).
     * A change of plan is the operator's (decisions.md): a user's attempt is 403 and audited. The
     * plan it has already, echoed by a client that reads, modifies and writes back, is no change.
     */
    async updateOrg(orgId: string, input: unknown, actor: Actor = operator()): Promise<Organization> {
      const before = await getOrg(orgId);
      const data = parseInput(updateOrgSchema, input);
      if (data.plan !== undefined && data.plan !== before.plan && actor.type !== 'cli') {
        const attempt = change(actor, 'organization.plan_refused', orgTarget(before), { plan: before.plan }, data);
        await repo.recordRefusal(attempt);
        throw new AppError(
          'forbidden',
          `The plan of an organization is set by the server's operator (svc orgs set-plan ${before.name} ${data.plan})`,
        );
      }
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
    /** Signs the data-processing agreement for the organization in the name of `userEmail`, an OWNER of it. */
    async acceptDpa(orgRef: string, userEmail: string, actor: Actor = operator()): Promise<Organization> {
      return signDpa(await getOrg(orgRef), await getUserByEmail(userEmail), actor);
    },

    /** The same, over HTTP: the signed-in user signs. */
    async signDpa(orgId: string, userId: string, actor: Actor): Promise<Organization> {
      const user = await repo.findUserById(userId);
      if (!user) throw new AppError('not_found', `no user ${userId}`);
      return signDpa(await getOrg(orgId), user, actor);
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
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
