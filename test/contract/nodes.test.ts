// The nodes store (src/nodes/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeRow } from '../../src/nodes/index.ts';
import { collateNotByBytes } from './collation.ts';
import { openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

describe.each(STORE_KINDS)('NodesStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await collateNotByBytes(s, kind, 'nodes', 'id');
  });
  afterAll(() => s?.close());

  const row = (id: string, seen: string, more: Partial<NodeRow> = {}): NodeRow => ({
    id,
    hostname: 'mta',
    pid: 7,
    version: '0.1.0',
    started_at: '2026-11-26T11:00:00.000Z',
    seen_at: seen,
    relay_sessions: 0,
    ...more,
  });

  it('save: inserts the row, then changes only seen_at and relay_sessions', async () => {
    await s.store.nodes.save(row('n1', '2026-11-26T12:00:00.000Z'));
    await s.store.nodes.save(
      row('n1', '2026-11-26T12:00:10.000Z', { hostname: 'other', pid: 9, version: '9', relay_sessions: 4 }),
    );
    expect(await s.query("SELECT * FROM nodes WHERE id = 'n1'")).toEqual([
      row('n1', '2026-11-26T12:00:10.000Z', { relay_sessions: 4 }),
    ]);
  });

  it('fresh: the nodes seen at or after `since`, in id byte order, as saved', async () => {
    await s.store.nodes.save(row('n_b', '2026-11-26T12:01:00.000Z'));
    await s.store.nodes.save(row('nB', '2026-11-26T12:01:00.000Z'));
    await s.store.nodes.save(row('n_old', '2026-11-26T11:59:59.999Z'));
    const fresh = await s.store.nodes.fresh('2026-11-26T12:00:10.000Z');
    expect(fresh.map((r) => r.id)).toEqual(['n1', 'nB', 'n_b']);
    expect(fresh[0]).toEqual(row('n1', '2026-11-26T12:00:10.000Z', { relay_sessions: 4 }));
  });

  it('remove: deletes the row, and a node without one is no error', async () => {
    await s.store.nodes.remove('n_b');
    await s.store.nodes.remove('never');
    expect((await s.store.nodes.fresh('2026-11-26T00:00:00.000Z')).map((r) => r.id)).toEqual(['n1', 'nB', 'n_old']);
  });
});
