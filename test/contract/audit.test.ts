// The audit store (src/audit/store.ts) on both stores. The writer is held by the contract tests
// of the stores that call it; here, one of them writes the rows whose shape the reader shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditLog } from '../../src/audit/index.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

/** Raw rows of organization `org`, in this order; their ids sort neither way. */
const rows = (org: string, ids: string[]) =>
  ids
    .map(
      (id) => `INSERT INTO audit_logs (id, organization_id, actor_type, actor_name, action, target_type, target_id,
                                       created_at)
               VALUES ('${id}', '${org}', 'cli', 'op', 'act.${id}', 't', '${id}', '${AT}')`,
    )
    .join(';\n');

const ids = (logs: AuditLog[]) => logs.map((r) => r.id);

describe.each(STORE_KINDS)('AuditStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(rows('o8', ['m', 'z', 'a', 'k', 'b']));
    await s.exec(rows('o9', ['9a', '9b', '9c', '9d']));
  });
  afterAll(() => s?.close());

  it('list: the organization’s rows newest first, in the order written, at most `limit`', async () => {
    expect(ids(await s.store.audit.list('o8', undefined, 10))).toEqual(['b', 'k', 'a', 'z', 'm']);
    expect(ids(await s.store.audit.list('o8', undefined, 2))).toEqual(['b', 'k']);
    expect(await s.store.audit.list('nobody', undefined, 10)).toEqual([]);
  });

  it('list: the page written before the row `before`; from the newest when it names no row', async () => {
    expect(ids(await s.store.audit.list('o8', 'k', 2))).toEqual(['a', 'z']);
    expect(ids(await s.store.audit.list('o8', 'm', 2))).toEqual([]);
    expect(ids(await s.store.audit.list('o8', 'missing', 2))).toEqual(['b', 'k']);
  });

  it('list: a row as the API shows it, as the writer wrote it inside a change', async () => {
    const entry = { action: 'api_key.create', project_id: 'p1', target_type: 'api_key', target_id: 'k1' };
    await s.store.keys.createKey(
      {
        id: 'k1',
        project_id: 'p1',
        name: 'key',
        prefix: 'svc_live_abcdefabcdef',
        key_hash: 'hash-k1',
        permissions: 'FULL_ACCESS',
        env: 'LIVE',
        created_by: 'u1',
        expires_at: null,
        created_at: AT,
      },
      {
        actor: { type: 'user', user_id: 'u1', ip: '192.0.2.1' },
        atMs: Date.parse(AT),
        entry: { ...entry, before: null, after: { name: 'key', n: [1, 2] } },
      },
    );
    const [row] = await s.store.audit.list('o1', undefined, 1);
    expect(row).toEqual({
      id: expect.any(String) as string,
      // Found from the project; the actor named by the user's email at the time.
      organization_id: 'o1',
      project_id: 'p1',
      actor: { type: 'user', id: 'u1', name: 'owner@example.com', ip: '192.0.2.1' },
      action: 'api_key.create',
      target_type: 'api_key',
      target_id: 'k1',
      before: null,
      after: { name: 'key', n: [1, 2] },
      created_at: AT,
    });
  });

  it('iterate: every row of the organization in list’s order, page by page', async () => {
    const all = async (org: string, pageSize?: number) => {
      const out: string[] = [];
      for await (const r of s.store.audit.iterate(org, pageSize)) out.push(r.id);
      return out;
    };
    expect(await all('o8', 2)).toEqual(['b', 'k', 'a', 'z', 'm']);
    // A last page exactly full, then an empty one.
    expect(await all('o9', 2)).toEqual(['9d', '9c', '9b', '9a']);
    expect(await all('o9')).toEqual(['9d', '9c', '9b', '9a']);
    expect(await all('nobody', 2)).toEqual([]);
  });

  it('iterate: a row written once it has begun is not in it', async () => {
    const seen: string[] = [];
    for await (const r of s.store.audit.iterate('o9', 2)) {
      if (seen.length === 0) await s.exec(rows('o9', ['9e']));
      seen.push(r.id);
    }
    expect(seen).toEqual(['9d', '9c', '9b', '9a']);
    expect(ids(await s.store.audit.list('o9', undefined, 1))).toEqual(['9e']);
  });
});
