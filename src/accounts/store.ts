// The accounts store: what accounts ask of a database, whichever runs. repo.ts (SQLite) and
// repo-pg.ts (PostgreSQL) implement it; test/contract/accounts.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { Plan } from '../limits/index.ts';
import type { Role } from './schema.ts';

export interface UserRow {
  id: string;
  /** As it was written; looked up in any case of its letters. */
  email: string;
  password_hash: string;
  created_at: string;
}

export interface OrgRow {
  id: string;
  name: string;
  plan: Plan;
  daily_limit: number | null;
  rate_limit_per_second: number | null;
  dpa_accepted_at: string | null;
  dpa_accepted_by: string | null;
  created_at: string;
}

export interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  /** A JSON object of the settings set so far ('{}' at first); its spacing and key order are the store's. */
  settings: string;
  created_at: string;
}

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  /** SHA-256 of the token: the token itself is never stored. */
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
}

/** A membership with its user's address. */
export interface MemberRow {
  organization_id: string;
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
}

/** An organization as it is created: no limits of its own, no DPA yet. */
export type NewOrgRow = Pick<OrgRow, 'id' | 'name' | 'plan' | 'created_at'>;

/** A project as it is created: its settings start as '{}'. */
export type NewProjectRow = Omit<ProjectRow, 'settings'>;

/** An invitation as it is created: not accepted yet. */
export type NewInvitationRow = Omit<InvitationRow, 'accepted_at' | 'accepted_by'>;

/** A change of an organization: each field absent is left as it is. */
export interface OrgChange {
  name?: string | undefined;
  plan?: Plan | undefined;
}

/**
 * A change of a project: each field absent is left as it is. `settingsPatch` is a JSON object
 * of known flags (booleans, never null), merged key by key into the stored settings.
 */
export interface ProjectChange {
  name?: string | undefined;
  settingsPatch?: string;
}

/**
 * Users, organizations, projects, memberships and invitations. Every write but createUser
 * commits with its audit row (`a`), in one transaction: a write that is refused writes
 * neither. A write refused by a UNIQUE constraint rejects with the store's own error, which
 * isUniqueViolation (store/errors.ts) recognises on both stores: the service answers 409.
 * Writes that name a row take it as found by the caller: one that is absent changes nothing
 * but the audit log.
 */
export interface AccountsStore {
  /**
   * The user whose address is `email` in any case of its letters (SQLite's NOCASE folds ASCII,
   * PostgreSQL's citext folds more); undefined when none. The address comes back as written.
   */
  findUserByEmail(email: string): Promise<UserRow | undefined>;
  /** The user, or undefined when absent. */
  findUserById(id: string): Promise<UserRow | undefined>;
  /** The organization, or undefined when absent. */
  findOrgById(id: string): Promise<OrgRow | undefined>;
  /** The organization named exactly `name` (names are unique, case counts); undefined when none. */
  findOrgByName(name: string): Promise<OrgRow | undefined>;
  /** Every organization, oldest first (created_at, then id in byte order). */
  listOrgs(): Promise<OrgRow[]>;
  /** The organizations the user is a member of, each with the user's role, in the order they were created. */
  listOrgsOfUser(userId: string): Promise<(OrgRow & { role: Role })[]>;
  /** How many organizations exist (a first `svc serve` creates one when none). */
  countOrgs(): Promise<number>;
  /** The project, of any organization; undefined when absent. */
  findProjectById(id: string): Promise<ProjectRow | undefined>;
  /** The projects named exactly `name`, of every organization, in no set order (the caller tells them apart). */
  listProjectsByName(name: string): Promise<ProjectRow[]>;
  /** The organization's projects, oldest first (created_at, then id in byte order). */
  listProjects(orgId: string): Promise<ProjectRow[]>;
  /** The organization's members with their addresses, in the order they joined (created_at, then user id in byte order). */
  listMembers(orgId: string): Promise<MemberRow[]>;
  /** The user's membership of the organization, with the address; undefined when not a member. */
  findMember(orgId: string, userId: string): Promise<MemberRow | undefined>;
  /**
   * Inserts the user, without an audit row (a user belongs to no organization yet). An address
   * taken, in any case, is a UNIQUE violation.
   */
  createUser(u: UserRow): Promise<void>;
  /**
   * Inserts the organization and makes `ownerId` its first OWNER (joined at its created_at),
   * with the audit row, in one transaction. A name taken is a UNIQUE violation.
   */
  createOrgWithOwner(o: NewOrgRow, ownerId: string, a: Audited): Promise<void>;
  /** Makes the user a member with `role`, joined at `at`, with the audit row. A member already is a UNIQUE violation. */
  addMember(orgId: string, userId: string, role: Role, at: string, a: Audited): Promise<void>;
  /** Inserts the project with settings '{}' and the audit row. A name taken in its organization is a UNIQUE violation. */
  createProject(p: NewProjectRow, a: Audited): Promise<void>;
  /** Renames and re-plans the organization (either may be absent), with the audit row. A name taken is a UNIQUE violation. */
  updateOrg(orgId: string, change: OrgChange, a: Audited): Promise<void>;
  /**
   * Deletes the organization with everything in it (its projects and all theirs, domains,
   * memberships, invitations), with the audit row; the audit log keeps its rows.
   */
  deleteOrg(orgId: string, a: Audited): Promise<void>;
  /** Records an attempt that was refused: the audit row, and nothing else. */
  recordRefusal(a: Audited): Promise<void>;
  /** Records that `userId` signed the DPA at `at` (dpa_accepted_at, dpa_accepted_by), with the audit row. */
  acceptDpa(orgId: string, userId: string, at: string, a: Audited): Promise<void>;
  /**
   * Renames the project and merges `settingsPatch` into its stored settings (keys not in the
   * patch are kept), with the audit row. The merge is one statement over the stored value, so
   * concurrent changes of different keys never undo each other. A name taken in its
   * organization is a UNIQUE violation.
   */
  updateProject(projectId: string, change: ProjectChange, a: Audited): Promise<void>;
  /** Deletes the project with everything in it (keys, templates, suppressions, emails), with the audit row. */
  deleteProject(projectId: string, a: Audited): Promise<void>;
  /**
   * Sets the member's role, with the audit row. Demoting the organization's last OWNER rejects
   * with AppError `conflict` and writes nothing; the owners are counted inside the write's
   * transaction, so two demotions at once (on two nodes, on PostgreSQL) cannot both pass.
   */
  setMemberRole(orgId: string, userId: string, role: Role, a: Audited): Promise<void>;
  /** Removes the member, with the audit row. The last OWNER is never removed: AppError `conflict`, as setMemberRole. */
  removeMember(orgId: string, userId: string, a: Audited): Promise<void>;
  /** Inserts the invitation, not accepted, with the audit row. A token hash taken is a UNIQUE violation. */
  createInvitation(i: NewInvitationRow, a: Audited): Promise<void>;
  /** The invitation whose token hashes to `hash`, accepted or expired as it may be (the caller judges); undefined when none. */
  findInvitationByHash(hash: string): Promise<InvitationRow | undefined>;
  /**
   * Spends the invitation (accepted_at `at`, accepted_by `userId`) and makes the user a member
   * with the invited role, joined at `at`, with the audit row, in one transaction: once. An
   * invitation spent already rejects with AppError `conflict`; a user who is a member already
   * is a UNIQUE violation; either way nothing is written and the invitation stays as it was.
   */
  acceptInvitation(i: InvitationRow, userId: string, at: string, a: Audited): Promise<void>;
  /** The organization's invitations not accepted and not expired at `at`, oldest first (ties by id). */
  listPendingInvitations(orgId: string, at: string): Promise<InvitationRow[]>;
  /**
   * Deletes the organization's invitation `id` while it is not accepted, with the audit row, so
   * its token stops working. One accepted meanwhile, or none, rejects with AppError `not_found`
   * and writes nothing.
   */
  revokeInvitation(orgId: string, id: string, a: Audited): Promise<void>;
}
