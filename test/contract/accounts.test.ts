// The accounts store (src/accounts/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewInvitationRow, OrgRow, UserRow } from '../../src/accounts/store.ts';
import type { Audited } from '../../src/audit/index.ts';
import { isUniqueViolation } from '../../src/store/errors.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T13:00:00.000Z';
const EXPIRES = '2026-12-03T12:00:00.000Z';

/** Each audit row a millisecond after the last, so their ids (UUIDv7) sort in the order written. */
let tick = 0;
const audited = (target: string, action: string): Audited => ({
  actor: { type: 'cli', os_user: 'op' },
  atMs: Date.parse(AT) + tick++,
  entry: { action, organization_id: 'o2', target_type: 'test', target_id: target, before: null, after: null },
});

const user = (id: string, email: string): UserRow => ({ id, email, password_hash: `h-${id}`, created_at: AT });

const org = (id: string, name: string, created_at: string, over: Partial<OrgRow> = {}): OrgRow => ({
  id,
  name,
  plan: 'PAID',
  daily_limit: null,
  rate_limit_per_second: null,
  dpa_accepted_at: null,
  dpa_accepted_by: null,
  created_at,
  ...over,
});

const invitation = (id: string, email: string, token_hash: string): NewInvitationRow => ({
  id,
  organization_id: 'o2',
  email,
  role: 'ADMIN',
  token_hash,
  invited_by: 'u2',
  created_at: AT,
  expires_at: EXPIRES,
});

/** Resolves to whether `p` rejected with a UNIQUE violation of its store. */
const uniqueViolation = (p: Promise<unknown>) =>
  p.then(
    () => false,
    (e: unknown) => isUniqueViolation(e),
  );

describe.each(STORE_KINDS)('AccountsStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
  });
  afterAll(() => s?.close());

  const actions = async (target: string) =>
    (await s.query<{ action: string }>(`SELECT action FROM audit_logs WHERE target_id = '${target}' ORDER BY id`)).map(
      (r) => r.action,
    );
  const newOrg = (id: string, name: string, createdAt: string) =>
    s.store.accounts.createOrgWithOwner(
      { id, name, plan: 'PAID', created_at: createdAt },
      'u2',
      audited(id, 'organization.create'),
    );

  it('createUser: inserts the user, no audit row; an address taken in any case is a UNIQUE violation', async () => {
    await s.store.accounts.createUser(user('u2', 'Ada@Example.com'));
    expect(await uniqueViolation(s.store.accounts.createUser(user('u9', 'ADA@example.COM')))).toBe(true);
    expect(await s.query("SELECT id FROM users WHERE id IN ('u2', 'u9')")).toEqual([{ id: 'u2' }]);
    expect(await actions('u2')).toEqual([]);
  });

  it('findUserByEmail: the user by any case of the address, as written; undefined when none', async () => {
    expect(await s.store.accounts.findUserByEmail('ada@example.com')).toEqual(user('u2', 'Ada@Example.com'));
    expect(await s.store.accounts.findUserByEmail('nobody@example.com')).toBeUndefined();
  });

  it('findUserById: the user; undefined when absent', async () => {
    expect(await s.store.accounts.findUserById('u1')).toEqual({
      id: 'u1',
      email: 'owner@example.com',
      password_hash: 'h',
      created_at: AT,
    });
    expect(await s.store.accounts.findUserById('missing')).toBeUndefined();
  });

  it('createOrgWithOwner: the organization, its first OWNER and the audit row; a name taken writes nothing', async () => {
    await newOrg('o2', 'Two', LATER);
    expect(await s.store.accounts.findMember('o2', 'u2')).toEqual({
      organization_id: 'o2',
      user_id: 'u2',
      email: 'Ada@Example.com',
      role: 'OWNER',
      created_at: LATER,
    });
    expect(await actions('o2')).toEqual(['organization.create']);
    expect(await uniqueViolation(newOrg('o9', 'Two', LATER))).toBe(true);
    expect(await s.query("SELECT organization_id FROM memberships WHERE organization_id = 'o9'")).toEqual([]);
    expect(await actions('o9')).toEqual([]);
  });

  it('findOrgById: the organization as stored, and nothing else; undefined when absent', async () => {
    expect(await s.store.accounts.findOrgById('o2')).toEqual(org('o2', 'Two', LATER));
    expect(await s.store.accounts.findOrgById('missing')).toBeUndefined();
  });

  it('findOrgByName: the organization named exactly so; undefined otherwise', async () => {
    expect(await s.store.accounts.findOrgByName('Two')).toEqual(org('o2', 'Two', LATER));
    expect(await s.store.accounts.findOrgByName('two')).toBeUndefined();
  });

  it('listOrgs: every organization, oldest first, ties by id', async () => {
    // Written 'ob' before 'oa', at the same instant.
    await newOrg('ob', 'B', '2026-11-26T14:00:00.000Z');
    await newOrg('oa', 'A', '2026-11-26T14:00:00.000Z');
    const orgs = await s.store.accounts.listOrgs();
    expect(orgs.map((o) => o.id)).toEqual(['o1', 'o2', 'oa', 'ob']);
    expect(orgs[1]).toEqual(org('o2', 'Two', LATER));
  });

  it("listOrgsOfUser: the user's organizations with its role, in the order they were created", async () => {
    const orgs = await s.store.accounts.listOrgsOfUser('u2');
    expect(orgs.map((o) => [o.id, o.role])).toEqual([
      ['o2', 'OWNER'],
      ['ob', 'OWNER'],
      ['oa', 'OWNER'],
    ]);
    expect(orgs[0]).toEqual({ ...org('o2', 'Two', LATER), role: 'OWNER' });
    expect(await s.store.accounts.listOrgsOfUser('u1')).toEqual([]);
  });

  it('countOrgs: how many organizations exist', async () => {
    expect(await s.store.accounts.countOrgs()).toBe(4);
  });

  it('updateOrg: renames and re-plans with the audit row, fields absent kept; a name taken writes nothing', async () => {
    await s.store.accounts.updateOrg('oa', { plan: 'PREMIUM' }, audited('oa', 'organization.update'));
    await s.store.accounts.updateOrg('oa', { name: 'Alpha' }, audited('oa', 'organization.update'));
    expect(await s.store.accounts.findOrgById('oa')).toMatchObject({ name: 'Alpha', plan: 'PREMIUM' });
    const taken = s.store.accounts.updateOrg('oa', { name: 'Two', plan: 'FREE' }, audited('oa', 'organization.taken'));
    expect(await uniqueViolation(taken)).toBe(true);
    expect(await s.store.accounts.findOrgById('oa')).toMatchObject({ name: 'Alpha', plan: 'PREMIUM' });
    expect(await actions('oa')).toEqual(['organization.create', 'organization.update', 'organization.update']);
  });

  it('acceptDpa: records who signed and when, with the audit row', async () => {
    await s.store.accounts.acceptDpa('ob', 'u2', LATER, audited('ob', 'organization.accept_dpa'));
    expect(await s.store.accounts.findOrgById('ob')).toEqual(
      org('ob', 'B', '2026-11-26T14:00:00.000Z', { dpa_accepted_at: LATER, dpa_accepted_by: 'u2' }),
    );
    expect(await actions('ob')).toEqual(['organization.create', 'organization.accept_dpa']);
  });

  it('recordRefusal: the audit row and nothing else', async () => {
    await s.store.accounts.recordRefusal(audited('ob', 'organization.plan_refused'));
    expect(await s.store.accounts.findOrgById('ob')).toMatchObject({ plan: 'PAID', dpa_accepted_at: LATER });
    expect(await actions('ob')).toEqual([
      'organization.create',
      'organization.accept_dpa',
      'organization.plan_refused',
    ]);
  });

  it("createProject: the project with settings '{}' and the audit row; a name taken in its organization writes nothing", async () => {
    await s.store.accounts.createProject(
      { id: 'p2', organization_id: 'o2', name: 'Web', created_at: LATER },
      audited('p2', 'project.create'),
    );
    await s.store.accounts.createProject(
      { id: 'pw', organization_id: 'o1', name: 'Web', created_at: AT },
      audited('pw', 'project.create'),
    );
    const dup = { id: 'p9', organization_id: 'o2', name: 'Web', created_at: AT };
    expect(await uniqueViolation(s.store.accounts.createProject(dup, audited('p9', 'project.create')))).toBe(true);
    expect(await actions('p2')).toEqual(['project.create']);
    expect(await actions('p9')).toEqual([]);
  });

  it('findProjectById: the project of any organization; undefined when absent', async () => {
    expect(await s.store.accounts.findProjectById('p2')).toEqual({
      id: 'p2',
      organization_id: 'o2',
      name: 'Web',
      settings: '{}',
      created_at: LATER,
    });
    expect(await s.store.accounts.findProjectById('p9')).toBeUndefined();
  });

  it('listProjectsByName: the projects so named, of every organization', async () => {
    const found = await s.store.accounts.listProjectsByName('Web');
    expect(found.map((p) => p.id).sort()).toEqual(['p2', 'pw']);
    expect(await s.store.accounts.listProjectsByName('web')).toEqual([]);
  });

  it("listProjects: the organization's projects, oldest first, ties by id", async () => {
    for (const [id, name] of [
      ['pz', 'Z'],
      ['py', 'Y'],
    ] as const) {
      await s.store.accounts.createProject(
        { id, organization_id: 'o2', name, created_at: AT },
        audited(id, 'project.create'),
      );
    }
    expect((await s.store.accounts.listProjects('o2')).map((p) => p.id)).toEqual(['py', 'pz', 'p2']);
    expect(await s.store.accounts.listProjects('missing')).toEqual([]);
  });

  it('updateProject: renames and merges the settings patch key by key, with the audit row; a name taken writes nothing', async () => {
    await s.store.accounts.updateProject(
      'p2',
      { settingsPatch: '{"click_tracking":true}' },
      audited('p2', 'project.update'),
    );
    await s.store.accounts.updateProject(
      'p2',
      { name: 'Site', settingsPatch: '{"open_tracking":false}' },
      audited('p2', 'project.update'),
    );
    const taken = { name: 'Y', settingsPatch: '{"click_tracking":false}' };
    expect(await uniqueViolation(s.store.accounts.updateProject('p2', taken, audited('p2', 'project.taken')))).toBe(
      true,
    );
    const p2 = (await s.store.accounts.findProjectById('p2'))!;
    expect([p2.name, JSON.parse(p2.settings)]).toEqual(['Site', { click_tracking: true, open_tracking: false }]);
    expect(await actions('p2')).toEqual(['project.create', 'project.update', 'project.update']);
  });

  it('deleteProject: the project with everything in it, and the audit row', async () => {
    await s.exec(`INSERT INTO api_keys (id, project_id, name, prefix, key_hash, permissions, env, created_at)
      VALUES ('k1', 'pz', 'k', 'svc_', 'kh1', 'FULL_ACCESS', 'TEST', '${AT}')`);
    await s.store.accounts.deleteProject('pz', audited('pz', 'project.delete'));
    expect(await s.store.accounts.findProjectById('pz')).toBeUndefined();
    expect(await s.query("SELECT id FROM api_keys WHERE id = 'k1'")).toEqual([]);
    expect(await actions('pz')).toEqual(['project.create', 'project.delete']);
  });

  it('addMember: the membership at its time, with the audit row; a member already writes nothing', async () => {
    await s.store.accounts.addMember('o2', 'u1', 'DEVELOPER', LATER, audited('m-u1', 'member.add'));
    const again = s.store.accounts.addMember('o2', 'u1', 'ADMIN', AT, audited('m-u1', 'member.again'));
    expect(await uniqueViolation(again)).toBe(true);
    expect((await s.store.accounts.findMember('o2', 'u1'))?.role).toBe('DEVELOPER');
    expect(await actions('m-u1')).toEqual(['member.add']);
  });

  it('findMember: the membership with the address; undefined when not a member', async () => {
    expect(await s.store.accounts.findMember('o2', 'u1')).toEqual({
      organization_id: 'o2',
      user_id: 'u1',
      email: 'owner@example.com',
      role: 'DEVELOPER',
      created_at: LATER,
    });
    expect(await s.store.accounts.findMember('o1', 'u1')).toBeUndefined();
  });

  it('listMembers: the members with their addresses in the order they joined, ties by user id', async () => {
    // u2 joined first (as the OWNER), u1 later in the same instant: the tie goes by id.
    expect(await s.store.accounts.listMembers('o2')).toEqual([
      { organization_id: 'o2', user_id: 'u1', email: 'owner@example.com', role: 'DEVELOPER', created_at: LATER },
      { organization_id: 'o2', user_id: 'u2', email: 'Ada@Example.com', role: 'OWNER', created_at: LATER },
    ]);
    expect(await s.store.accounts.listMembers('missing')).toEqual([]);
  });

  it('setMemberRole: sets the role with the audit row; demoting the last OWNER is a conflict and writes nothing', async () => {
    await expect(
      s.store.accounts.setMemberRole('o2', 'u2', 'ADMIN', audited('m-u2', 'member.refused')),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await s.store.accounts.findMember('o2', 'u2'))?.role).toBe('OWNER');
    expect(await actions('m-u2')).toEqual([]);
    await s.store.accounts.setMemberRole('o2', 'u1', 'OWNER', audited('m-u1', 'member.update'));
    await s.store.accounts.setMemberRole('o2', 'u2', 'VIEWER', audited('m-u2', 'member.update'));
    const roles = (await s.store.accounts.listMembers('o2')).map((m) => [m.user_id, m.role]);
    expect(roles).toEqual([
      ['u1', 'OWNER'],
      ['u2', 'VIEWER'],
    ]);
    expect(await actions('m-u2')).toEqual(['member.update']);
  });

  it('removeMember: removes with the audit row; removing the last OWNER is a conflict and writes nothing', async () => {
    await expect(s.store.accounts.removeMember('o2', 'u1', audited('m-u1', 'member.refused'))).rejects.toMatchObject({
      code: 'conflict',
    });
    expect((await s.store.accounts.findMember('o2', 'u1'))?.role).toBe('OWNER');
    await s.store.accounts.removeMember('o2', 'u2', audited('m-u2', 'member.remove'));
    expect(await s.store.accounts.findMember('o2', 'u2')).toBeUndefined();
    expect(await actions('m-u1')).toEqual(['member.add', 'member.update']);
    expect(await actions('m-u2')).toEqual(['member.update', 'member.remove']);
  });

  it('createInvitation: the invitation, not accepted, with the audit row; a token hash taken writes nothing', async () => {
    await s.store.accounts.createInvitation(
      invitation('i1', 'New@Example.com', 'th1'),
      audited('i1', 'invitation.create'),
    );
    const dup = s.store.accounts.createInvitation(
      invitation('i9', 'x@example.com', 'th1'),
      audited('i9', 'invitation.create'),
    );
    expect(await uniqueViolation(dup)).toBe(true);
    expect(await actions('i1')).toEqual(['invitation.create']);
    expect(await actions('i9')).toEqual([]);
  });

  it('findInvitationByHash: the invitation as stored; undefined when none', async () => {
    expect(await s.store.accounts.findInvitationByHash('th1')).toEqual({
      ...invitation('i1', 'New@Example.com', 'th1'),
      accepted_at: null,
      accepted_by: null,
    });
    expect(await s.store.accounts.findInvitationByHash('missing')).toBeUndefined();
  });

  it('acceptInvitation: spends it and makes the member, once; a spent invitation or a member already writes nothing', async () => {
    await s.store.accounts.createUser(user('u3', 'new@example.com'));
    const found = (await s.store.accounts.findInvitationByHash('th1'))!;
    await s.store.accounts.acceptInvitation(found, 'u3', LATER, audited('i1', 'invitation.accept'));
    expect(await s.store.accounts.findMember('o2', 'u3')).toMatchObject({ role: 'ADMIN', created_at: LATER });
    expect(await s.store.accounts.findInvitationByHash('th1')).toMatchObject({ accepted_at: LATER, accepted_by: 'u3' });
    await expect(
      s.store.accounts.acceptInvitation(found, 'u3', EXPIRES, audited('i1', 'invitation.again')),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(await s.store.accounts.findInvitationByHash('th1')).toMatchObject({ accepted_at: LATER, accepted_by: 'u3' });
    expect(await actions('i1')).toEqual(['invitation.create', 'invitation.accept']);

    await s.store.accounts.createInvitation(
      invitation('i2', 'owner@example.com', 'th2'),
      audited('i2', 'invitation.create'),
    );
    const member = (await s.store.accounts.findInvitationByHash('th2'))!;
    const taken = s.store.accounts.acceptInvitation(member, 'u1', LATER, audited('i2', 'invitation.accept'));
    expect(await uniqueViolation(taken)).toBe(true);
    expect(await s.store.accounts.findInvitationByHash('th2')).toMatchObject({ accepted_at: null, accepted_by: null });
    expect((await s.store.accounts.findMember('o2', 'u1'))?.role).toBe('OWNER');
    expect(await actions('i2')).toEqual(['invitation.create']);
  });

  it('listPendingInvitations: not accepted, not expired at `at`, oldest first, of the organization only', async () => {
    await s.store.accounts.createInvitation(
      { ...invitation('i3', 'later@example.com', 'th3'), created_at: LATER },
      audited('i3', 'invitation.create'),
    );
    const ids = async (orgId: string, at: string) =>
      (await s.store.accounts.listPendingInvitations(orgId, at)).map((i) => i.id);
    expect(await ids('o2', LATER)).toEqual(['i2', 'i3']);
    expect((await s.store.accounts.listPendingInvitations('o2', LATER))[0]).toEqual({
      ...invitation('i2', 'owner@example.com', 'th2'),
      accepted_at: null,
      accepted_by: null,
    });
    expect(await ids('o2', EXPIRES)).toEqual([]);
    expect(await ids('o9', LATER)).toEqual([]);
  });

  it("revokeInvitation: deletes a pending one with the audit row, once; accepted, unknown or another's: not_found, nothing written", async () => {
    const notFound = (orgId: string, id: string) =>
      expect(s.store.accounts.revokeInvitation(orgId, id, audited(id, 'invitation.again'))).rejects.toMatchObject({
        code: 'not_found',
      });
    await notFound('o9', 'i3');
    await s.store.accounts.revokeInvitation('o2', 'i3', audited('i3', 'invitation.revoke'));
    expect(await s.store.accounts.findInvitationByHash('th3')).toBeUndefined();
    expect((await s.store.accounts.listPendingInvitations('o2', LATER)).map((i) => i.id)).toEqual(['i2']);
    await notFound('o2', 'i3');
    await notFound('o2', 'i1');
    expect(await s.store.accounts.findInvitationByHash('th1')).toMatchObject({ accepted_by: 'u3' });
    expect(await actions('i3')).toEqual(['invitation.create', 'invitation.revoke']);
    expect(await actions('i1')).toEqual(['invitation.create', 'invitation.accept']);
  });

  it('deleteOrg: the organization with everything in it, with the audit row; the audit log stays', async () => {
    await s.store.accounts.deleteOrg('o2', audited('o2', 'organization.delete'));
    expect(await s.store.accounts.findOrgById('o2')).toBeUndefined();
    expect(await s.query("SELECT id FROM projects WHERE organization_id = 'o2'")).toEqual([]);
    expect(await s.query("SELECT user_id FROM memberships WHERE organization_id = 'o2'")).toEqual([]);
    expect(await s.query("SELECT id FROM invitations WHERE organization_id = 'o2'")).toEqual([]);
    expect(await s.store.accounts.listOrgsOfUser('u3')).toEqual([]);
    expect(await actions('o2')).toEqual(['organization.create', 'organization.delete']);
    expect(await actions('p2')).toEqual(['project.create', 'project.update', 'project.update']);
    expect(await s.store.accounts.countOrgs()).toBe(3);
  });
});
