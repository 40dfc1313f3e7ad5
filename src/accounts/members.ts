import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId, randomToken, sha256Hex } from '../lib/ids.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { parseInput } from '../validation.ts';
import type { Actor } from '../audit/index.ts';
import { auditChange } from './audit-change.ts';
import type { AccountsStore, InvitationRow, MemberRow } from './store.ts';
import {
  acceptInvitationSchema,
  INVITATION_PREFIX,
  INVITATION_TTL_MS,
  inviteSchema,
  memberRoleSchema,
  NO_PENDING_INVITATION,
  type Role,
} from './schema.ts';
import { toMember, toOrganization, type AccountsService, type Member, type Organization } from './service.ts';

export interface MembersDeps {
  repo: AccountsStore;
  clock: Clock;
  accounts: Pick<AccountsService, 'createUser'>;
}

/** An invitation as it is shown: never its token's hash, and pending, so never accepted. */
const toInvitation = ({ token_hash: _h, accepted_at: _a, accepted_by: _b, ...shown }: InvitationRow) => shown;
export type Invitation = ReturnType<typeof toInvitation>;

/** Who may do what in an organization: access checks, roles of members, invitations. */
export function createMembersService({ repo, clock, accounts }: MembersDeps) {
  const now = () => iso(clock.now());
  const change = auditChange(clock);

  async function getMember(orgId: string, userId: string): Promise<MemberRow> {
    const member = isUuid(userId) ? await repo.findMember(orgId, userId) : undefined;
    if (!member) throw new AppError('not_found', `no member ${userId}`);
    return member;
  }

  return {
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

    /** The organization's invitations still open (not accepted, not expired), oldest first; no token. */
    async listInvitations(orgId: string): Promise<Invitation[]> {
      return (await repo.listPendingInvitations(orgId, now())).map(toInvitation);
    },

    /** Revokes an invitation still open, so its link stops working; accepted, expired or unknown: 404. */
    async revokeInvitation(orgId: string, id: string, actor: Actor): Promise<void> {
      const pending = isUuid(id) ? await repo.listPendingInvitations(orgId, now()) : [];
      const invitation = pending.find((i) => i.id === id);
      if (!invitation) throw new AppError('not_found', NO_PENDING_INVITATION);
      const target = { organization_id: orgId, type: 'invitation', id };
      await repo.revokeInvitation(
        orgId,
        id,
        change(actor, 'invitation.revoke', target, toInvitation(invitation), null),
      );
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
        await accounts.createUser({ email: invitation.email, password });
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

export type MembersService = ReturnType<typeof createMembersService>;
