// The keys store (src/keys/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import type { KeysStore, NewKey } from '../../src/keys/index.ts';
import { isUniqueViolation } from '../../src/store/errors.ts';
import { collateNotByBytes } from './collation.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T12:05:00.000Z';

/** PostgreSQL's trigger that moves the auth epoch when a key changes (migrations-pg/0001). */
const EPOCH_TRIGGER = `CREATE TRIGGER api_keys_epoch_update
  AFTER UPDATE OF id, project_id, name, prefix, key_hash, permissions, env, created_by, expires_at, revoked_at,
                  created_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION svc_bump_auth_epoch()`;

const audited = (target: string, action = 'api_key.test'): Audited => ({
  actor: { type: 'cli', os_user: 'op' },
  atMs: Date.parse(AT),
  entry: { action, project_id: 'p1', target_type: 'api_key', target_id: target, before: null, after: null },
});

const key = (id: string, over: Partial<NewKey> = {}): NewKey => ({
  id,
  project_id: 'p1',
  name: `key ${id}`,
  prefix: 'svc_live_abcdefabcdef',
  key_hash: `hash-${id}`,
  permissions: 'FULL_ACCESS',
  env: 'LIVE',
  created_by: 'u1',
  expires_at: null,
  created_at: AT,
  ...over,
});

describe.each(STORE_KINDS)('KeysStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    // PostgreSQL alters no column a trigger names: the epoch's trigger steps aside meanwhile.
    if (kind === 'postgres') await s.exec('DROP TRIGGER api_keys_epoch_update ON api_keys');
    await collateNotByBytes(s, kind, 'api_keys', 'id');
    if (kind === 'postgres') await s.exec(EPOCH_TRIGGER);
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'Q', '${AT}')`);
  });
  afterAll(() => s?.close());

  const audits = async (target: string) =>
    (await s.query<{ action: string }>(`SELECT action FROM audit_logs WHERE target_id = '${target}'`)).map(
      (r) => r.action,
    );
  const epoch = async () => Number((await s.query<{ n: number }>('SELECT n FROM auth_epoch'))[0]!.n);

  it('createKey: inserts the key, never used and not revoked, with its audit row', async () => {
    await s.store.keys.createKey(key('k1'), audited('k1', 'api_key.create'));
    expect(await s.store.keys.findKeyById('k1')).toEqual({ ...key('k1'), last_used_at: null, revoked_at: null });
    expect(await audits('k1')).toEqual(['api_key.create']);
  });

  it('createKey: a name held by an active key of the project rejects as a UNIQUE violation, nothing written', async () => {
    const taken = s.store.keys.createKey(key('k2', { name: 'key k1' }), audited('k2'));
    await expect(taken.then(() => 'created', isUniqueViolation)).resolves.toBe(true);
    expect(await s.store.keys.findKeyById('k2')).toBeUndefined();
    expect(await audits('k2')).toEqual([]);
    // Another project may hold the name.
    await s.store.keys.createKey(key('k3', { name: 'key k1', project_id: 'p2' }), audited('k3'));
    expect((await s.store.keys.findKeyById('k3'))?.name).toBe('key k1');
  });

  it('createKey: a token hash taken rejects as a UNIQUE violation, nothing written', async () => {
    const taken = s.store.keys.createKey(key('k4', { key_hash: 'hash-k1' }), audited('k4'));
    await expect(taken.then(() => 'created', isUniqueViolation)).resolves.toBe(true);
    expect(await s.store.keys.findKeyById('k4')).toBeUndefined();
    expect(await audits('k4')).toEqual([]);
  });

  it('findKeyById: the key of any project; undefined when absent', async () => {
    expect((await s.store.keys.findKeyById('k3'))?.project_id).toBe('p2');
    expect(await s.store.keys.findKeyById('missing')).toBeUndefined();
  });

  it('revokeKey: sets revoked_at and writes the audit row; false and nothing written when already revoked or absent', async () => {
    await s.store.keys.createKey(key('k5'), audited('k5', 'api_key.create'));
    expect(await s.store.keys.revokeKey('k5', AT, audited('k5', 'api_key.revoke'))).toBe(true);
    expect((await s.store.keys.findKeyById('k5'))?.revoked_at).toBe(AT);
    expect(await s.store.keys.revokeKey('k5', LATER, audited('k5', 'api_key.revoke'))).toBe(false);
    expect((await s.store.keys.findKeyById('k5'))?.revoked_at).toBe(AT);
    expect(await audits('k5')).toEqual(['api_key.create', 'api_key.revoke']);
    expect(await s.store.keys.revokeKey('missing', AT, audited('missing'))).toBe(false);
    expect(await audits('missing')).toEqual([]);
  });

  it('revokeKey: revoking frees the name for a new key', async () => {
    await s.store.keys.createKey(key('k6', { name: 'key k5' }), audited('k6'));
    expect((await s.store.keys.findKeyById('k6'))?.name).toBe('key k5');
  });

  it('listKeys: the project’s keys newest first, then by id in byte order; revoked ones only when asked', async () => {
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p3', 'o1', 'R', '${AT}')`);
    for (const [id, at] of [
      ['a-1', AT],
      ['B-1', AT],
      ['_-1', AT],
      ['c-1', LATER],
    ] as const) {
      await s.store.keys.createKey(key(id, { project_id: 'p3', created_at: at }), audited(id));
    }
    await s.store.keys.revokeKey('B-1', LATER, audited('B-1'));
    const ids = async (includeRevoked: boolean) => (await s.store.keys.listKeys('p3', includeRevoked)).map((k) => k.id);
    expect(await ids(true)).toEqual(['c-1', 'a-1', '_-1', 'B-1']);
    expect(await ids(false)).toEqual(['c-1', 'a-1', '_-1']);
    expect(await s.store.keys.listKeys('p9', true)).toEqual([]);
  });

  it('findPrincipalByHash: the key with its project and organization; undefined when none', async () => {
    await s.exec(`UPDATE projects SET settings = '{"click_tracking":true}' WHERE id = 'p1'`);
    await s.exec(`UPDATE organizations SET daily_limit = 100, rate_limit_per_second = 5 WHERE id = 'o1'`);
    expect(await s.store.keys.findPrincipalByHash('hash-k1')).toEqual({
      ...key('k1'),
      last_used_at: null,
      revoked_at: null,
      organization_id: 'o1',
      project_settings: '{"click_tracking":true}',
      plan: 'FREE',
      daily_limit: 100,
      rate_limit_per_second: 5,
      dpa_accepted_at: null,
    });
    expect(await s.store.keys.findPrincipalByHash('no-such-hash')).toBeUndefined();
  });

  it('findPrincipalByHash: revoked keys are found too, revoked', async () => {
    expect((await s.store.keys.findPrincipalByHash('hash-k5'))?.revoked_at).toBe(AT);
  });

  it('findPrincipalByHash: a key revoked or a plan changed since the last call is seen at the next', async () => {
    await s.store.keys.createKey(key('k7'), audited('k7'));
    expect(await s.store.keys.findPrincipalByHash('hash-k7')).toMatchObject({ revoked_at: null, plan: 'FREE' });
    await s.store.keys.revokeKey('k7', LATER, audited('k7'));
    expect((await s.store.keys.findPrincipalByHash('hash-k7'))?.revoked_at).toBe(LATER);
    // Another process's change (raw SQL, outside the store) is seen too.
    await s.exec(`UPDATE organizations SET plan = 'PAID' WHERE id = 'o1'`);
    expect((await s.store.keys.findPrincipalByHash('hash-k7'))?.plan).toBe('PAID');
    await s.exec(`UPDATE api_keys SET permissions = 'READ_ONLY' WHERE id = 'k7'`);
    expect((await s.store.keys.findPrincipalByHash('hash-k7'))?.permissions).toBe('READ_ONLY');
  });

  it('findKept: the key findPrincipalByHash last found, from memory, with the epoch it stands on (SQLite only)', async () => {
    if (kind === 'postgres') {
      expect('findKept' in s.store.keys).toBe(false);
      return;
    }
    const keys = s.store.keys as Required<KeysStore>;
    const findKept = (hash: string) => keys.findKept(hash);
    await s.store.keys.createKey(key('k8'), audited('k8'));
    expect(findKept('hash-k8')).toBeUndefined();
    const found = await s.store.keys.findPrincipalByHash('hash-k8');
    const kept = findKept('hash-k8')!;
    expect(kept.principal).toEqual(found);
    expect(kept.check).toMatchObject({ epoch: await epoch(), verified: false });
    expect(kept.check.read()).toBe(await epoch());
    // Another process's change moves the epoch: the check reads it, the memory answers as before.
    await s.exec(`UPDATE organizations SET plan = 'PAID' WHERE id = 'o1'`);
    expect(kept.check.read()).toBe(kept.check.epoch + 1);
    expect(findKept('hash-k8')?.check.epoch).toBe(kept.check.epoch);
    // The next lookup reads the epoch and forgets every key kept under the old one.
    expect(findKept('no-such-hash')).toBeUndefined();
    await s.store.keys.findPrincipalByHash('no-such-hash');
    expect(findKept('hash-k8')).toBeUndefined();
  });

  it('touchKeys: sets last_used_at on each key given, unknown and revoked ones skipped; no audit row, the epoch stays', async () => {
    const before = await epoch();
    await s.store.keys.touchKeys(['k1', 'k3', 'k5', 'missing'], LATER);
    expect((await s.store.keys.findKeyById('k5'))?.last_used_at).toBeNull();
    expect((await s.store.keys.findKeyById('k1'))?.last_used_at).toBe(LATER);
    expect((await s.store.keys.findKeyById('k3'))?.last_used_at).toBe(LATER);
    expect((await s.store.keys.findKeyById('k6'))?.last_used_at).toBeNull();
    expect(await audits('k1')).toEqual(['api_key.create']);
    expect(await epoch()).toBe(before);
    await s.store.keys.touchKeys([], LATER);
  });
});
