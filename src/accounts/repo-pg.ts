import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import { NO_PENDING_INVITATION, type Role } from './schema.ts';
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

/** An OrgRow's columns: the table's seq (migration 0006) is PostgreSQL's alone and stays out of the row, as on SQLite. */
const ORG_COLUMNS =
  'o.id, o.name, o.plan, o.daily_limit, o.rate_limit_per_second, o.dpa_accepted_at, o.dpa_accepted_by, o.created_at';
const ORG = `SELECT ${ORG_COLUMNS} FROM organizations o`;

const INVITATION_COLUMNS = `id, organization_id, email::text AS email, role, token_hash, invited_by, created_at,
  expires_at, accepted_at, accepted_by`;

const MEMBER = `SELECT m.organization_id, m.user_id, u.email::text AS email, m.role, m.created_at
                FROM memberships m JOIN users u ON u.id = m.user_id`;

/**
 * The accounts store on PostgreSQL (store.ts); every management write commits with its audit
 * row. Ties in time are broken as on SQLite: by id in byte order (COLLATE "C"), or by seq
 * where SQLite uses its rowid (the order rows were written).
 */
export function createPgAccountsRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): AccountsStore {
  const one = async <T extends object>(sql: string, params: unknown[] = []) =>
    (await pool.query<T>(sql, params)).rows[0];
  const all = async <T extends object>(sql: string, params: unknown[] = []) => (await pool.query<T>(sql, params)).rows;
  // citext comes back as text already; the cast names the column's type for readers of the SQL.
  const USER = 'SELECT id, email::text AS email, password_hash, created_at FROM users';

  /** Runs `work` and records its audit row in one transaction. */
  const audited = <T>(a: Audited, work: (t: PgTx) => Promise<T>) =>
    tx.write(async (t) => {
      const result = await work(t);
      await audit.record(t, a.actor, a.entry, a.atMs);
      return result;
    });

  // Checked inside the write's own transaction, with the owners' rows locked, so two
  // demotions at once on two nodes cannot both pass.
  async function keepAnOwner(t: PgTx, orgId: string, userId: string): Promise<void> {
    const owners = await t.query<{ user_id: string }>(
      "SELECT user_id FROM memberships WHERE organization_id = $1 AND role = 'OWNER' FOR UPDATE",
      [orgId],
    );
    if (owners.rows.some((o) => o.user_id === userId) && owners.rows.length <= 1) {
      throw new AppError('conflict', 'An organization keeps at least one OWNER: make another member OWNER first');
    }
  }

  return {
    findUserByEmail: (email: string) => one<UserRow>(`${USER} WHERE email = $1`, [email]),
    findUserById: (id: string) => one<UserRow>(`${USER} WHERE id = $1`, [id]),
    findOrgById: (id: string) => one<OrgRow>(`${ORG} WHERE o.id = $1`, [id]),
    findOrgByName: (name: string) => one<OrgRow>(`${ORG} WHERE o.name = $1`, [name]),
    listOrgs: () => all<OrgRow>(`${ORG} ORDER BY o.created_at, o.id COLLATE "C"`),
    listOrgsOfUser: (userId: string) =>
      all<OrgRow & { role: Role }>(
        `SELECT ${ORG_COLUMNS}, m.role FROM memberships m JOIN organizations o ON o.id = m.organization_id
         WHERE m.user_id = $1 ORDER BY o.created_at, o.seq`,
        [userId],
      ),
    countOrgs: async () => (await one<{ n: number }>('SELECT count(*) AS n FROM organizations'))!.n,
    findProjectById: (id: string) => one<ProjectRow>('SELECT * FROM projects WHERE id = $1', [id]),
    listProjectsByName: (name: string) => all<ProjectRow>('SELECT * FROM projects WHERE name = $1', [name]),
    listProjects: (orgId: string) =>
      all<ProjectRow>('SELECT * FROM projects WHERE organization_id = $1 ORDER BY created_at, id COLLATE "C"', [orgId]),
    listMembers: (orgId: string) =>
      all<MemberRow>(`${MEMBER} WHERE m.organization_id = $1 ORDER BY m.created_at, m.user_id COLLATE "C"`, [orgId]),
    findMember: (orgId: string, userId: string) =>
      one<MemberRow>(`${MEMBER} WHERE m.organization_id = $1 AND m.user_id = $2`, [orgId, userId]),
    createUser: (u: UserRow) =>
      tx.write(async (t) => {
        await t.query('INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)', [
          u.id,
          u.email,
          u.password_hash,
          u.created_at,
        ]);
      }),
    createOrgWithOwner: (o: NewOrgRow, ownerId: string, a: Audited) =>
      audited(a, async (t) => {
        await t.query('INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $2, $3, $4)', [
          o.id,
          o.name,
          o.plan,
          o.created_at,
        ]);
        await t.query(
          "INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, 'OWNER', $3)",
          [o.id, ownerId, o.created_at],
        );
      }),
    addMember: (orgId: string, userId: string, role: Role, at: string, a: Audited) =>
      audited(a, async (t) => {
        await t.query('INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)', [
          orgId,
          userId,
          role,
          at,
        ]);
      }),
    createProject: (p: NewProjectRow, a: Audited) =>
      audited(a, async (t) => {
        await t.query('INSERT INTO projects (id, organization_id, name, created_at) VALUES ($1, $2, $3, $4)', [
          p.id,
          p.organization_id,
          p.name,
          p.created_at,
        ]);
      }),
    updateOrg: (orgId: string, change: OrgChange, a: Audited) =>
      audited(a, async (t) => {
        if (change.name !== undefined)
          await t.query('UPDATE organizations SET name = $1 WHERE id = $2', [change.name, orgId]);
        if (change.plan !== undefined)
          await t.query('UPDATE organizations SET plan = $1 WHERE id = $2', [change.plan, orgId]);
      }),
    recordRefusal: (a: Audited) => audited(a, () => Promise.resolve()),
    deleteOrg: (orgId: string, a: Audited) =>
      audited(a, async (t) => {
        await t.query('DELETE FROM organizations WHERE id = $1', [orgId]);
      }),
    acceptDpa: (orgId: string, userId: string, at: string, a: Audited) =>
      audited(a, async (t) => {
        await t.query('UPDATE organizations SET dpa_accepted_at = $1, dpa_accepted_by = $2 WHERE id = $3', [
          at,
          userId,
          orgId,
        ]);
      }),
    // jsonb's `||` merges in one statement like SQLite's json_patch: the same for a patch of
    // flags, which are never null (json_patch would delete a key set to null, `||` keeps it).
    updateProject: (projectId: string, change: ProjectChange, a: Audited) =>
      audited(a, async (t) => {
        if (change.name !== undefined)
          await t.query('UPDATE projects SET name = $1 WHERE id = $2', [change.name, projectId]);
        if (change.settingsPatch !== undefined) {
          await t.query('UPDATE projects SET settings = (settings::jsonb || $1::jsonb)::text WHERE id = $2', [
            change.settingsPatch,
            projectId,
          ]);
        }
      }),
    deleteProject: (projectId: string, a: Audited) =>
      audited(a, async (t) => {
        await t.query('DELETE FROM projects WHERE id = $1', [projectId]);
      }),
    setMemberRole: (orgId: string, userId: string, role: Role, a: Audited) =>
      audited(a, async (t) => {
        if (role !== 'OWNER') await keepAnOwner(t, orgId, userId);
        await t.query('UPDATE memberships SET role = $1 WHERE organization_id = $2 AND user_id = $3', [
          role,
          orgId,
          userId,
        ]);
      }),
    removeMember: (orgId: string, userId: string, a: Audited) =>
      audited(a, async (t) => {
        await keepAnOwner(t, orgId, userId);
        await t.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [orgId, userId]);
      }),
    createInvitation: (i: NewInvitationRow, a: Audited) =>
      audited(a, async (t) => {
        await t.query(
          `INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [i.id, i.organization_id, i.email, i.role, i.token_hash, i.invited_by, i.created_at, i.expires_at],
        );
      }),
    findInvitationByHash: (hash: string) =>
      one<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM invitations WHERE token_hash = $1`, [hash]),
    acceptInvitation: (i: InvitationRow, userId: string, at: string, a: Audited) =>
      audited(a, async (t) => {
        const r = await t.query(
          'UPDATE invitations SET accepted_at = $1, accepted_by = $2 WHERE id = $3 AND accepted_at IS NULL',
          [at, userId, i.id],
        );
        if ((r.rowCount ?? 0) === 0) throw new AppError('conflict', 'This invitation was already accepted');
        await t.query('INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)', [
          i.organization_id,
          userId,
          i.role,
          at,
        ]);
      }),
    listPendingInvitations: (orgId: string, at: string) =>
      all<InvitationRow>(
        `SELECT ${INVITATION_COLUMNS} FROM invitations
         WHERE organization_id = $1 AND accepted_at IS NULL AND expires_at > $2
         ORDER BY created_at, id COLLATE "C"`,
        [orgId, at],
      ),
    revokeInvitation: (orgId: string, id: string, a: Audited) =>
      audited(a, async (t) => {
        const r = await t.query(
          'DELETE FROM invitations WHERE organization_id = $1 AND id = $2 AND accepted_at IS NULL',
          [orgId, id],
        );
        if ((r.rowCount ?? 0) === 0) throw new AppError('not_found', NO_PENDING_INVITATION);
      }),
  };
}
