import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createPgKeysRepo } from '../src/keys/repo-pg.ts';
import type { KeysStore } from '../src/keys/store.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// API keys on PostgreSQL with two nodes (issue 17, item 2): "a key revoked through one node is
// refused by the others on the next request", though each node keeps the keys it resolved.

type Node = PgNode & { keys: KeysStore };

let url: string;
let drop: () => Promise<void>;
let a: Node;
let b: Node;

async function node(): Promise<Node> {
  const n = await pgNode(url);
  return { ...n, keys: createPgKeysRepo(n.pool, n.tx, createPgAuditWriter()) };
}

const AT = Date.parse('2026-11-26T12:00:00.000Z');
const key = (id: string, hash: string) => ({
  id,
  project_id: 'p1',
  name: id,
  prefix: 'svc_live_abc',
  key_hash: hash,
  permissions: 'FULL_ACCESS' as const,
  env: 'LIVE' as const,
  created_by: 'u1',
  expires_at: null,
  created_at: new Date(AT).toISOString(),
});
const audited = (action: string, target: string) => ({
  actor: { type: 'user' as const, user_id: 'u1', ip: '192.0.2.1' },
  atMs: AT,
  entry: { project_id: 'p1', action, target_type: 'api_key', target_id: target, before: null, after: { id: target } },
});

beforeAll(async () => {
  ({ url, drop } = await migratedPgDatabase('keys'));
  [a, b] = [await node(), await node()];
  await a.pool.query(
    `INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'Owner@Example.com', 'h', 'x');
     INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
     INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x')`,
  );
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

describe('API keys on PostgreSQL, with two nodes', () => {
  it('sees on one node, at its next request, a key revoked or a plan changed through the other', async () => {
    await a.keys.createKey(key('k1', 'hash-1'), audited('api_key.create', 'k1'));
    // Node b resolves the key and keeps it.
    expect(await b.keys.findPrincipalByHash('hash-1')).toMatchObject({
      id: 'k1',
      organization_id: 'o1',
      plan: 'FREE',
      revoked_at: null,
    });
    expect(await b.keys.findPrincipalByHash('hash-1')).toMatchObject({ revoked_at: null });

    expect(await a.keys.revokeKey('k1', '2026-11-26T12:05:00.000Z', audited('api_key.revoke', 'k1'))).toBe(true);
    expect(await b.keys.findPrincipalByHash('hash-1')).toMatchObject({ revoked_at: '2026-11-26T12:05:00.000Z' });
    // Revoked already: no change, no second audit row.
    expect(await b.keys.revokeKey('k1', '2026-11-26T12:06:00.000Z', audited('api_key.revoke', 'k1'))).toBe(false);

    await a.keys.createKey(key('k2', 'hash-2'), audited('api_key.create', 'k2'));
    expect(await b.keys.findPrincipalByHash('hash-2')).toMatchObject({ plan: 'FREE' });
    await a.pool.query("UPDATE organizations SET plan = 'PAID' WHERE id = 'o1'");
    expect(await b.keys.findPrincipalByHash('hash-2')).toMatchObject({ plan: 'PAID' });
    // Only using a key (last_used_at) does not make every node forget its keys.
    const epoch = async () => (await a.pool.query<{ n: number }>('SELECT n FROM auth_epoch')).rows[0]!.n;
    const before = await epoch();
    await b.keys.touchKeys(['k2'], '2026-11-26T12:07:00.000Z');
    expect(await epoch()).toBe(before);
    expect(await a.keys.findKeyById('k2')).toMatchObject({ last_used_at: '2026-11-26T12:07:00.000Z' });
    expect(await b.keys.findPrincipalByHash('unknown')).toBeUndefined();
  });

  it('writes each change with its audit row, naming the organization and the user as they were', async () => {
    const rows = await a.pool.query(
      'SELECT organization_id, project_id, actor_type, actor_name, ip, action, target_id FROM audit_logs ORDER BY target_id, action',
    );
    const by = { organization_id: 'o1', project_id: 'p1', actor_type: 'user' };
    const who = { ...by, actor_name: 'Owner@Example.com', ip: '192.0.2.1' };
    expect(rows.rows).toEqual([
      { ...who, action: 'api_key.create', target_id: 'k1' },
      { ...who, action: 'api_key.revoke', target_id: 'k1' },
      { ...who, action: 'api_key.create', target_id: 'k2' },
    ]);
    expect((await b.keys.listKeys('p1', false)).map((k) => k.id)).toEqual(['k2']);
    expect((await b.keys.listKeys('p1', true)).map((k) => k.id)).toEqual(['k2', 'k1']);
  });
});
