// The suppressions store (src/suppressions/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import type { Suppression } from '../../src/suppressions/index.ts';
import { collateNotByBytes } from './collation.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T12:05:00.000Z';

/** The audit row of a change to the list, told apart by its action. */
const audited = (action: string): Audited => ({
  actor: { type: 'cli', os_user: 'root' },
  atMs: Date.parse(AT),
  entry: { action, project_id: 'p1', target_type: 'suppression', target_id: 'x', before: null, after: null },
});

const entry = (email: string, reason: Suppression['reason'], at = AT, projectId = 'p1'): Suppression => ({
  project_id: projectId,
  email,
  reason,
  created_at: at,
});

describe.each(STORE_KINDS)('SuppressionsStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await collateNotByBytes(s, kind, 'suppressions', 'email');
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'Q', 'x')`);
  });
  afterAll(() => s?.close());

  const actions = async (action: string) =>
    (await s.query<{ action: string }>(`SELECT action FROM audit_logs WHERE action LIKE '${action}%'`)).map(
      (r) => r.action,
    );

  it('addMany: adds the entries with one audit row, in one transaction', async () => {
    await s.store.suppressions.addMany(
      'p1',
      [
        { email: 'b@example.com', reason: 'MANUAL' },
        { email: 'z@example.com', reason: 'COMPLAINT' },
      ],
      AT,
      audited('add.1'),
    );
    expect(await s.query('SELECT project_id, email, reason, created_at FROM suppressions ORDER BY email')).toEqual([
      entry('b@example.com', 'MANUAL'),
      entry('z@example.com', 'COMPLAINT'),
    ]);
    expect(await actions('add.1')).toEqual(['add.1']);
  });

  it('addMany: a listed address keeps its created_at and takes the new reason; the last reason given wins', async () => {
    await s.store.suppressions.addMany(
      'p1',
      [
        { email: 'b@example.com', reason: 'UNSUBSCRIBE' },
        { email: '_x@example.com', reason: 'MANUAL' },
        { email: 'b@example.com', reason: 'HARD_BOUNCE' },
      ],
      LATER,
      audited('add.2'),
    );
    expect(await s.store.suppressions.find('p1', 'b@example.com')).toEqual(entry('b@example.com', 'HARD_BOUNCE'));
    expect(await s.store.suppressions.find('p1', '_x@example.com')).toEqual(entry('_x@example.com', 'MANUAL', LATER));
  });

  it('addMany: writes its audit row even without entries', async () => {
    await s.store.suppressions.addMany('p1', [], AT, audited('add.none'));
    expect(await actions('add.none')).toEqual(['add.none']);
  });

  it("find: the project's entry for exactly that address, else undefined", async () => {
    await s.store.suppressions.addMany('p2', [{ email: 'p2@example.com', reason: 'MANUAL' }], AT, audited('add.p2'));
    expect(await s.store.suppressions.find('p2', 'p2@example.com')).toEqual(
      entry('p2@example.com', 'MANUAL', AT, 'p2'),
    );
    expect(await s.store.suppressions.find('p1', 'p2@example.com')).toBeUndefined();
    expect(await s.store.suppressions.find('p1', 'B@example.com')).toBeUndefined();
  });

  it('findMany: the entries of that project among the addresses, in one read', async () => {
    const got = await s.store.suppressions.findMany('p1', ['z@example.com', 'p2@example.com', 'here@example.com']);
    expect(got).toEqual([entry('z@example.com', 'COMPLAINT')]);
    expect(await s.store.suppressions.findMany('p1', [])).toEqual([]);
  });

  it('listPage: keyset pages of the project in byte order, after the last address of the previous page', async () => {
    // é is two bytes past z: last by bytes, next to e in a language's order.
    await s.store.suppressions.addMany('p1', [{ email: 'é@example.com', reason: 'MANUAL' }], AT, audited('add.3'));
    const page1 = await s.store.suppressions.listPage('p1', '', 2);
    expect(page1).toEqual([entry('_x@example.com', 'MANUAL', LATER), entry('b@example.com', 'HARD_BOUNCE')]);
    expect(await s.store.suppressions.listPage('p1', page1[1]!.email, 2)).toEqual([
      entry('z@example.com', 'COMPLAINT'),
      entry('é@example.com', 'MANUAL'),
    ]);
    expect(await s.store.suppressions.listPage('p1', 'é@example.com', 2)).toEqual([]);
    expect((await s.store.suppressions.listPage('p2', '', 10)).map((r) => r.email)).toEqual(['p2@example.com']);
  });

  it('listPage with a filter: addresses containing the text (%, _ and \\ literal) and of a reason, paged alike', async () => {
    const l = s.store.suppressions;
    const emails = (rows: { email: string }[]) => rows.map((r) => r.email);
    expect(emails(await l.listPage('p1', '', 10, { contains: 'Z@EX' }))).toEqual(['z@example.com']);
    // _ is a character here, not LIKE's any-one-character: only the address that has one.
    expect(emails(await l.listPage('p1', '', 10, { contains: '_' }))).toEqual(['_x@example.com']);
    expect(emails(await l.listPage('p1', '', 10, { contains: '%' }))).toEqual([]);
    expect(emails(await l.listPage('p1', '', 10, { contains: '\\' }))).toEqual([]);
    expect(emails(await l.listPage('p1', '', 10, { reason: 'COMPLAINT' }))).toEqual(['z@example.com']);
    expect(emails(await l.listPage('p1', '', 10, { contains: 'example', reason: 'HARD_BOUNCE' }))).toEqual([
      'b@example.com',
    ]);
    const first = await l.listPage('p1', '', 1, { contains: 'example.com' });
    expect(emails(first)).toEqual(['_x@example.com']);
    expect(emails(await l.listPage('p1', first[0]!.email, 1, { contains: 'example.com' }))).toEqual(['b@example.com']);
    expect(emails(await l.listPage('p2', '', 10, { contains: 'z@' }))).toEqual([]);
    expect(emails(await l.listPage('p1', '', 10, { contains: '  ' }))).toHaveLength(4);
  });

  it('remove: deletes the entry with its audit row; false and nothing written when not listed', async () => {
    expect(await s.store.suppressions.remove('p1', 'b@example.com', audited('remove.1'))).toBe(true);
    expect(await s.store.suppressions.find('p1', 'b@example.com')).toBeUndefined();
    expect(await s.store.suppressions.remove('p1', 'b@example.com', audited('remove.2'))).toBe(false);
    expect(await s.store.suppressions.remove('p1', 'p2@example.com', audited('remove.3'))).toBe(false);
    expect(await s.store.suppressions.find('p2', 'p2@example.com')).toBeDefined();
    expect(await actions('remove.')).toEqual(['remove.1']);
  });

  it('queues suppression.added for a new address only and suppression.removed, in the same transaction, to the webhooks that name them', async () => {
    const hook = (id: string, project: string, events: string[], active = 1) =>
      s.exec(
        `INSERT INTO webhooks (id, project_id, url, events, secret, is_active, created_at, updated_at)
         VALUES ('${id}', '${project}', 'https://h.test/', '${JSON.stringify(events)}', 's', ${active}, '${AT}', '${AT}')`,
      );
    await hook('w-added', 'p1', ['suppression.added']);
    await hook('w-both-off', 'p1', ['suppression.added', 'suppression.removed'], 0);
    await hook('w-star', 'p1', ['*']);
    await hook('w-other', 'p2', ['suppression.added']);
    const l = s.store.suppressions;
    await l.addMany(
      'p1',
      [
        { email: 'z@example.com', reason: 'MANUAL' },
        { email: 'new@example.com', reason: 'MANUAL' },
        { email: 'new@example.com', reason: 'COMPLAINT' },
      ],
      LATER,
      audited('add.n'),
    );
    await l.remove('p1', 'new@example.com', audited('remove.n'));
    const rows = await s.query<{ webhook_id: string; event_type: string; skip: number; payload: string }>(
      "SELECT webhook_id, event_type, skip, payload FROM webhook_outbox WHERE event_type LIKE 'suppression.%' ORDER BY seq",
    );
    expect(rows.map((r) => [r.webhook_id, r.event_type, Number(r.skip)])).toEqual([
      ['w-added', 'suppression.added', 0],
      ['w-both-off', 'suppression.added', 1],
      ['w-both-off', 'suppression.removed', 1],
    ]);
    expect(JSON.parse(rows[0]!.payload)).toMatchObject({
      type: 'suppression.added',
      created_at: '2026-11-26T12:05:00.000000Z',
      data: {
        project_id: 'p1',
        email_id: null,
        suppression: { email: 'new@example.com', reason: 'COMPLAINT', created_at: LATER },
      },
    });
    expect(JSON.parse(rows[0]!.payload).id).toBe(JSON.parse(rows[1]!.payload).id);
    await s.exec("DELETE FROM webhooks WHERE id IN ('w-added', 'w-both-off', 'w-star', 'w-other')");
  });
});
