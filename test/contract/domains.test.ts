// The domains store (src/domains/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import type { DkimKeyRow } from '../../src/domains/dkim-keys.ts';
import type { DomainState } from '../../src/domains/status.ts';
import type { KeyWrite, NewDomainRow } from '../../src/domains/store.ts';
import { isUniqueViolation } from '../../src/store/errors.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T13:00:00.000Z';

const audited = (target: string, action = 'domain.test'): Audited => ({
  actor: { type: 'cli', os_user: 'op' },
  atMs: Date.parse(AT),
  entry: { action, organization_id: 'o1', target_type: 'domain', target_id: target, before: null, after: null },
});

const domain = (id: string, name: string, over: Partial<NewDomainRow> = {}): NewDomainRow => ({
  id,
  organization_id: 'o1',
  name,
  dkim_selector: `s-${id}`,
  dkim_private_key: `priv-${id}`,
  dkim_public_key: `pub-${id}`,
  created_at: AT,
  ...over,
});

const key = (id: string, domainId: string, over: Partial<DkimKeyRow> = {}): DkimKeyRow => ({
  id,
  domain_id: domainId,
  selector: `sel-${id}`,
  algorithm: 'rsa',
  private_key: `priv-${id}`,
  public_key: `pub-${id}`,
  state: 'active',
  created_at: AT,
  activated_at: AT,
  retire_after: null,
  ...over,
});

const VERIFIED: DomainState = {
  status: 'VERIFIED',
  verified_at: LATER,
  failing_since: null,
  failing_checks: 0,
  warning: null,
};

describe.each(STORE_KINDS)('DomainsStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('o2', 'Other', 'FREE', '${AT}');
      INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'P2', '${AT}')`);
    const d = s.store.domains;
    expect(await d.createDomain(domain('d1', 'one.test'), null, 'p1', audited('d1'), [key('k1', 'd1')])).toBe(true);
    expect(await d.createDomain(domain('d2', 'two.test', { created_at: LATER }), null, undefined, audited('d2'))).toBe(
      true,
    );
  });
  afterAll(() => s?.close());
  /** The audit actions recorded for a target, sorted (the log's order is not the point here). */
  const audits = async (target: string) =>
    (await s.query<{ action: string }>(`SELECT action FROM audit_logs WHERE target_id = '${target}'`))
      .map((r) => r.action)
      .sort();

  it('createDomain: inserts the domain with its keys, binding and audit rows; true', async () => {
    const k = key('k3', 'd3', { algorithm: 'ed25519', state: 'pending', activated_at: null });
    const created = await s.store.domains.createDomain(
      domain('d3', 'three.test'),
      10,
      'p2',
      audited('d3'),
      [k],
      [audited('d3', 'dkim_rotation_started')],
    );
    expect(created).toBe(true);
    expect(await s.store.domains.findDomainById('d3')).toMatchObject({ name: 'three.test', status: 'PENDING' });
    expect(await s.store.domains.listDkimKeys('d3')).toEqual([k]);
    expect(await s.store.domains.listProjectIds('d3')).toEqual(['p2']);
    expect(await audits('d3')).toEqual(['dkim_rotation_started', 'domain.test']);
  });

  it('createDomain: false and nothing written at the organization ceiling', async () => {
    const n = (await s.store.domains.listDomains('o1')).length;
    const created = await s.store.domains.createDomain(domain('d4', 'four.test'), n, undefined, audited('d4'));
    expect(created).toBe(false);
    expect(await s.store.domains.findDomainById('d4')).toBeUndefined();
    expect(await audits('d4')).toEqual([]);
  });

  it('createDomain: a name taken (in any case) rejects as a UNIQUE violation before the ceiling', async () => {
    const taken = s.store.domains.createDomain(
      domain('d5', 'ONE.test', { organization_id: 'o2' }),
      0,
      undefined,
      audited('d5'),
    );
    await expect(
      taken.then(
        () => 'created',
        (e: unknown) => isUniqueViolation(e),
      ),
    ).resolves.toBe(true);
    expect(await s.store.domains.findDomainById('d5')).toBeUndefined();
    expect(await audits('d5')).toEqual([]);
  });

  it('findDomainById: the row with every column, undefined when none', async () => {
    const row = await s.store.domains.findDomainById('d1');
    expect(row).toEqual({
      ...domain('d1', 'one.test'),
      status: 'PENDING',
      verified_at: null,
      checks: null,
      last_checked_at: null,
      failing_since: null,
      failing_checks: 0,
      warning: null,
      receiving: 0,
    });
    expect(await s.store.domains.findDomainById('missing')).toBeUndefined();
  });

  it('findDomainByName: compared without case, undefined when none', async () => {
    expect((await s.store.domains.findDomainByName('ONE.Test'))?.id).toBe('d1');
    expect(await s.store.domains.findDomainByName('none.test')).toBeUndefined();
  });

  it("listDomains and listDomainIds: the organization's and the server's, oldest first", async () => {
    expect((await s.store.domains.listDomains('o1')).map((r) => r.id)).toEqual(['d1', 'd3', 'd2']);
    expect(await s.store.domains.listDomains('o2')).toEqual([]);
    expect(await s.store.domains.listDomainIds()).toEqual(['d1', 'd3', 'd2']);
  });

  it('findDomainWithKeys: the row and its keys in one read, as findDomainByName and listDkimKeys', async () => {
    const one = await s.store.domains.findDomainWithKeys('ONE.Test');
    expect(one).toEqual({
      row: await s.store.domains.findDomainByName('one.test'),
      keys: await s.store.domains.listDkimKeys('d1'),
    });
    expect(one?.keys.map((k) => k.id)).toEqual(['k1']);
    expect((await s.store.domains.findDomainWithKeys('two.test'))?.keys).toEqual([]);
    expect(await s.store.domains.findDomainWithKeys('none.test')).toBeUndefined();
  });

  it('listDkimKeys: oldest first, none for a domain without stored keys', async () => {
    expect((await s.store.domains.listDkimKeys('d1')).map((k) => k.id)).toEqual(['k1']);
    expect(await s.store.domains.listDkimKeys('d2')).toEqual([]);
  });

  it('bindProject and listProjectIds: binds once with its audit row; false, nothing audited, when bound', async () => {
    expect(await s.store.domains.bindProject('d2', 'p2', AT, audited('d2', 'bind'))).toBe(true);
    expect(await s.store.domains.bindProject('d2', 'p1', LATER, audited('d2', 'bind'))).toBe(true);
    expect(await s.store.domains.bindProject('d2', 'p2', LATER, audited('d2', 'bind'))).toBe(false);
    expect(await s.store.domains.listProjectIds('d2')).toEqual(['p2', 'p1']);
    expect(await audits('d2')).toEqual(['bind', 'bind', 'domain.test']);
  });

  it('unbindProject: unbinds with its audit row; false, nothing audited, when not bound', async () => {
    expect(await s.store.domains.unbindProject('d2', 'p2', audited('d2', 'unbind'))).toBe(true);
    expect(await s.store.domains.unbindProject('d2', 'p2', audited('d2', 'unbind'))).toBe(false);
    expect(await s.store.domains.listProjectIds('d2')).toEqual(['p1']);
    expect((await audits('d2')).filter((a) => a === 'unbind')).toEqual(['unbind']);
  });

  it('isVerifiedForProject: true only for a VERIFIED domain bound to the project, in any case', async () => {
    expect(await s.store.domains.isVerifiedForProject('p1', 'one.test')).toBe(false);
    await s.exec("UPDATE domains SET status = 'VERIFIED' WHERE id = 'd1'");
    expect(await s.store.domains.isVerifiedForProject('p1', 'One.TEST')).toBe(true);
    expect(await s.store.domains.isVerifiedForProject('p2', 'one.test')).toBe(false);
    await s.exec("UPDATE domains SET status = 'PENDING' WHERE id = 'd1'");
  });

  it('updateDkimKeys: writes the plan from the keys as stored, the dkim columns following the active RSA key', async () => {
    const next = key('k2', 'd1', { created_at: LATER });
    let seen: string[] = [];
    const written = await s.store.domains.updateDkimKeys('d1', (keys, row): KeyWrite => {
      seen = [...keys.map((k) => k.id), row.id];
      return {
        save: [{ ...keys[0]!, state: 'retiring', retire_after: LATER }, next],
        steps: [],
        activeRsa: next,
        audits: [audited('d1', 'dkim_key_activated')],
      };
    });
    expect(seen).toEqual(['k1', 'd1']);
    expect(written?.activeRsa).toEqual(next);
    expect((await s.store.domains.listDkimKeys('d1')).map((k) => [k.id, k.state, k.retire_after])).toEqual([
      ['k1', 'retiring', LATER],
      ['k2', 'active', null],
    ]);
    expect(await s.store.domains.findDomainById('d1')).toMatchObject({
      dkim_selector: 'sel-k2',
      dkim_private_key: 'priv-k2',
      dkim_public_key: 'pub-k2',
    });
    expect(await audits('d1')).toContain('dkim_key_activated');
  });

  it('updateDkimKeys: undefined when the domain is gone; a plan that throws writes nothing', async () => {
    expect(
      await s.store.domains.updateDkimKeys('missing', () => ({ save: [], steps: [], audits: [] })),
    ).toBeUndefined();
    const throwing = s.store.domains.updateDkimKeys('d1', () => {
      throw new Error('rotation under way');
    });
    await expect(throwing).rejects.toThrow('rotation under way');
    expect(await s.store.domains.listDkimKeys('d1')).toHaveLength(2);
  });

  it('recordCheck: stores the check and the state computed from the row inside the write, with keys and audit', async () => {
    const recorded = await s.store.domains.recordCheck(
      'd3',
      LATER,
      '[]',
      (row) => ({ ...VERIFIED, failing_checks: row.failing_checks }),
      (before, after) => audited('d3', `check ${before.status}->${after.status}`),
      (keys) => ({ save: [{ ...keys[0]!, state: 'active', activated_at: LATER }], steps: [], audits: [] }),
    );
    expect(recorded?.before).toMatchObject({ id: 'd3', status: 'PENDING', checks: null });
    expect(recorded?.after).toEqual(await s.store.domains.findDomainById('d3'));
    expect(recorded?.after).toMatchObject({ ...VERIFIED, checks: '[]', last_checked_at: LATER });
    expect(recorded?.keys?.save.map((k) => k.id)).toEqual(['k3']);
    expect((await s.store.domains.listDkimKeys('d3'))[0]).toMatchObject({ state: 'active', activated_at: LATER });
    expect(await audits('d3')).toContain('check PENDING->VERIFIED');
  });

  it('recordCheck: undefined when the domain is gone', async () => {
    expect(await s.store.domains.recordCheck('missing', LATER, '[]', (row) => row)).toBeUndefined();
  });

  it('deleteDomain: deletes it with its keys and bindings, with its audit row; false when none', async () => {
    expect(await s.store.domains.deleteDomain('d1', audited('d1', 'domain.delete'))).toBe(true);
    expect(await s.store.domains.findDomainById('d1')).toBeUndefined();
    expect(await s.store.domains.listDkimKeys('d1')).toEqual([]);
    expect(await s.query("SELECT project_id FROM project_domains WHERE domain_id = 'd1'")).toEqual([]);
    expect(await audits('d1')).toContain('domain.delete');
    expect(await s.store.domains.deleteDomain('d1', audited('d1', 'again'))).toBe(false);
    expect(await audits('d1')).not.toContain('again');
  });
});
