// The tracking store (src/tracking/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrackingEvent } from '../../src/tracking/index.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

describe.each(STORE_KINDS)('TrackingStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(`INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
      VALUES ('e1', 'p1', 'LIVE', 'DELIVERED', 'a@x.test', '[]', 's', '${AT}')`);
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'P2', '${AT}')`);
  });
  afterAll(() => s?.close());

  const event = (id: string, emailId: string): TrackingEvent => ({
    id,
    emailId,
    type: 'clicked',
    data: { url: 'https://example.com/a' },
    ip: '192.0.2.1',
    userAgent: 'test',
    at: AT,
  });

  it("addEvent: records the event on the email's timeline", async () => {
    expect(await s.store.tracking.addEvent(event('t1', 'e1'))).toBe(true);
    const rows = await s.query<{ type: string; data: string; ip_address: string }>(
      "SELECT type, data, ip_address FROM email_events WHERE id = 't1'",
    );
    expect(rows).toEqual([
      { type: 'clicked', data: JSON.stringify({ url: 'https://example.com/a' }), ip_address: '192.0.2.1' },
    ]);
  });

  it('addEvent: false and nothing written when the email is gone', async () => {
    expect(await s.store.tracking.addEvent(event('t2', 'missing'))).toBe(false);
    expect(await s.query("SELECT id FROM email_events WHERE id = 't2'")).toEqual([]);
  });

  const unsubscribe = (eventId: string, projectId = 'p1', emailId = 'e1') =>
    s.store.tracking.unsubscribe({ projectId, emailId, email: 'r@x.test', eventId, at: AT });
  const listed = () =>
    s.query<{ project_id: string; reason: string }>(
      "SELECT project_id, reason FROM suppressions WHERE email = 'r@x.test'",
    );
  const unsubscribedEvents = () => s.query("SELECT id FROM email_events WHERE type = 'unsubscribed'");

  it('unsubscribe: not_found and nothing written for an email of another project or none', async () => {
    expect(await unsubscribe('u0', 'p2')).toBe('not_found');
    expect(await unsubscribe('u0', 'p1', 'missing')).toBe('not_found');
    expect(await listed()).toEqual([]);
    expect(await unsubscribedEvents()).toEqual([]);
  });

  it('unsubscribe: lists the address (UNSUBSCRIBE) with one event; a second time writes nothing', async () => {
    expect(await unsubscribe('u1')).toBe('added');
    expect(await unsubscribe('u2')).toBe('already');
    expect(await listed()).toEqual([{ project_id: 'p1', reason: 'UNSUBSCRIBE' }]);
    expect(await unsubscribedEvents()).toEqual([{ id: 'u1' }]);
  });
});
