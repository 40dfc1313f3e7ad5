import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { NO_PENDING_INVITATION, type Role } from './schema.ts';
import { AppError } from '../errors.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type {
  AccountsStore,
  InvitationRow,
  MemberRow,
  NewInvitationRow,
  NewOrgRow,
  NewProjectRow,
  OrgChange,
  OrgRow,
  ProjectChange,
  ProjectRow,
  UserRow,
} from './store.ts';

export type { InvitationRow, MemberRow, OrgRow, ProjectRow, UserRow } from './store.ts';

/**
 * The accounts store on SQLite (store.ts): reads run at once, writes inside a group
 * transaction, every management write with its audit row.
 */
export function createAccountsRepo(db: Db, tx: Committer, audit: AuditWriter): AccountsStore {
  const q = {
    userByEmail: db.prepare<[string], UserRow>('SELECT * FROM users WHERE email = ?'),
    userById: db.prepare<[string], UserRow>('SELECT * FROM users WHERE id = ?'),
    orgById: db.prepare<[string], OrgRow>('SELECT * FROM organizations WHERE id = ?'),
    orgByName: db.prepare<[string], OrgRow>('SELECT * FROM organizations WHERE name = ?'),
    orgs: db.prepare<[], OrgRow>('SELECT * FROM organizations ORDER BY created_at, id'),
    orgsOfUser: db.prepare<[string], OrgRow & { role: Role }>(
      `SELECT o.*, m.role FROM memberships m JOIN organizations o ON o.id = m.organization_id
       WHERE m.user_id = +? ORDER BY o.created_at, o.rowid`,
    ),
    orgCount: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM organizations'),
    projectById: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE id = ?'),
    projectsByName: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE name = ?'),
    projectsOfOrg: db.prepare<[string], ProjectRow>(
      'SELECT * FROM projects WHERE organization_id = +? ORDER BY created_at, id',
    ),
    members: db.prepare<[string], MemberRow>(
      `SELECT m.organization_id, m.user_id, u.email, m.role, m.created_at
       FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = +? ORDER BY m.created_at, m.user_id`,
    ),
    member: db.prepare<[string, string], MemberRow>(
      `SELECT m.organization_id, m.user_id, u.email, m.role, m.created_at
       FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = +? AND m.user_id = +?`,
    ),
  };
  const w = {
    insertUser: db.prepare('INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)'),
    insertOrg: db.prepare('INSERT INTO organizations (id, name, plan, created_at) VALUES (?, ?, ?, ?)'),
    insertMember: db.prepare(
      'INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, ?, ?)',
    ),
    insertProject: db.prepare('INSERT INTO projects (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)'),
    setPlan: db.prepare('UPDATE organizations SET plan = ? WHERE id = ?'),
    acceptDpa: db.prepare('UPDATE organizations SET dpa_accepted_at = ?, dpa_accepted_by = ? WHERE id = ?'),
    // json_patch merges in one statement, so concurrent changes of different keys never undo each other.
    mergeSettings: db.prepare('UPDATE projects SET settings = json_patch(settings, ?) WHERE id = ?'),
    renameOrg: db.prepare('UPDATE organizations SET name = ? WHERE id = ?'),
    setRole: db.prepare('UPDATE memberships SET role = ? WHERE organization_id = ? AND user_id = ?'),
    removeMember: db.prepare('DELETE FROM memberships WHERE organization_id = ? AND user_id = ?'),
    insertInvitation: db.prepare(
      `INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at)
       VALUES (@id, @organization_id, @email, @role, @token_hash, @invited_by, @created_at, @expires_at)`,
    ),
    acceptInvitation: db.prepare(
      'UPDATE invitations SET accepted_at = ?, accepted_by = ? WHERE id = ? AND accepted_at IS NULL',
    ),
    revokeInvitation: db.prepare(
      'DELETE FROM invitations WHERE organization_id = ? AND id = ? AND accepted_at IS NULL',
    ),
    deleteOrg: db.prepare('DELETE FROM organizations WHERE id = ?'),
    renameProject: db.prepare('UPDATE projects SET name = ? WHERE id = ?'),
    deleteProject: db.prepare('DELETE FROM projects WHERE id = ?'),
  };
  /** Runs `work` and records its audit row in one transaction. */
  const audited = <T>(a: Audited, work: () => T) =>
    tx.write(() => {
      const result = work();
      audit.record(a.actor, a.entry, a.atMs);
      return result;
    });
  const owners = db.prepare<[string], { n: number }>(
    "SELECT count(*) AS n FROM memberships WHERE organization_id = ? AND role = 'OWNER'",
  );
  const invitationByHash = db.prepare<[string], InvitationRow>('SELECT * FROM invitations WHERE token_hash = ?');
  const pendingInvitations = db.prepare<[string, string], InvitationRow>(
    `SELECT * FROM invitations WHERE organization_id = +? AND accepted_at IS NULL AND expires_at > +?
     ORDER BY created_at, id`,
  );
  // Checked inside the write's own transaction, so two demotions at once cannot both pass.
  const keepAnOwner = (orgId: string, userId: string) => {
    const m = q.member.get(orgId, userId);
    if (m?.role === 'OWNER' && owners.get(orgId)!.n <= 1) {
      throw new AppError('conflict', 'An organization keeps at least one OWNER: make another member OWNER first');
    }
  };
  const read = <T>(v: T) => Promise.resolve(v);
  return {
    findUserByEmail: (email: string) => read(q.userByEmail.get(email)),
    findUserById: (id: string) => read(q.userById.get(id)),
    findOrgById: (id: string) => read(q.orgById.get(id)),
    findOrgByName: (name: string) => read(q.orgByName.get(name)),
    listOrgs: () => read(q.orgs.all()),
    listOrgsOfUser: (userId: string) => read(q.orgsOfUser.all(userId)),
    countOrgs: () => read(q.orgCount.get()!.n),
    findProjectById: (id: string) => read(q.projectById.get(id)),
    listProjectsByName: (name: string) => read(q.projectsByName.all(name)),
    listProjects: (orgId: string) => read(q.projectsOfOrg.all(orgId)),
    listMembers: (orgId: string) => read(q.members.all(orgId)),
    findMember: (orgId: string, userId: string) => read(q.member.get(orgId, userId)),
    createUser: (u: UserRow) => tx.write(() => void w.insertUser.run(u.id, u.email, u.password_hash, u.created_at)),
    createOrgWithOwner: (o: NewOrgRow, ownerId: string, a: Audited) =>
      audited(a, () => {
        w.insertOrg.run(o.id, o.name, o.plan, o.created_at);
        w.insertMember.run(o.id, ownerId, 'OWNER', o.created_at);
      }),
    addMember: (orgId: string, userId: string, role: Role, at: string, a: Audited) =>
      audited(a, () => void w.insertMember.run(orgId, userId, role, at)),
    createProject: (p: NewProjectRow, a: Audited) =>
      audited(a, () => void w.insertProject.run(p.id, p.organization_id, p.name, p.created_at)),
    updateOrg: (orgId: string, change: OrgChange, a: Audited) =>
      audited(a, () => {
        if (change.name !== undefined) w.renameOrg.run(change.name, orgId);
        if (change.plan !== undefined) w.setPlan.run(change.plan, orgId);
      }),
    deleteOrg: (orgId: string, a: Audited) => audited(a, () => void w.deleteOrg.run(orgId)),
    recordRefusal: (a: Audited) => audited(a, () => undefined),
    acceptDpa: (orgId: string, userId: string, at: string, a: Audited) =>
      audited(a, () => void w.acceptDpa.run(at, userId, orgId)),
    updateProject: (projectId: string, change: ProjectChange, a: Audited) =>
      audited(a, () => {
        if (change.name !== undefined) w.renameProject.run(change.name, projectId);
        if (change.settingsPatch !== undefined) w.mergeSettings.run(change.settingsPatch, projectId);
      }),
    deleteProject: (projectId: string, a: Audited) => audited(a, () => void w.deleteProject.run(projectId)),
    setMemberRole: (orgId: string, userId: string, role: Role, a: Audited) =>
      audited(a, () => {
        if (role !== 'OWNER') keepAnOwner(orgId, userId);
        w.setRole.run(role, orgId, userId);
      }),
    removeMember: (orgId: string, userId: string, a: Audited) =>
      audited(a, () => {
        keepAnOwner(orgId, userId);
        w.removeMember.run(orgId, userId);
      }),
    createInvitation: (i: NewInvitationRow, a: Audited) => audited(a, () => void w.insertInvitation.run(i)),
    findInvitationByHash: (hash: string) => read(invitationByHash.get(hash)),
    acceptInvitation: (i: InvitationRow, userId: string, at: string, a: Audited) =>
      audited(a, () => {
        if (w.acceptInvitation.run(at, userId, i.id).changes === 0) {
          throw new AppError('conflict', 'This invitation was already accepted');
        }
        w.insertMember.run(i.organization_id, userId, i.role, at);
      }),
    listPendingInvitations: (orgId: string, at: string) => read(pendingInvitations.all(orgId, at)),
    revokeInvitation: (orgId: string, id: string, a: Audited) =>
      audited(a, () => {
        if (w.revokeInvitation.run(orgId, id).changes === 0) throw new AppError('not_found', NO_PENDING_INVITATION);
      }),
  };
}
