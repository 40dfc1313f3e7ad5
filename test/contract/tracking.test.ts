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
});
