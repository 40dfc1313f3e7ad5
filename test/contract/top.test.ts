// svc top's store (src/top/store.ts) on both stores: the reader the Store wires (topReader),
// over each store's TopData, read through its two methods.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEmail } from '../../src/emails/store.ts';
import { newEmail } from '../postgres/email-fixture.ts';
import { openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const NOW = T0 + 30_000;
const at = (ms: number) => new Date(ms).toISOString();

const SETUP = `INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'Q', 'x');
  INSERT INTO webhooks (id, project_id, url, events, secret, auto_disabled, is_active, created_at, updated_at)
    VALUES ('w1', 'p1', 'https://hooks.example.com/', '["delivered"]', 's', 0, 1, 'x', 'x'),
           ('w2', 'p2', 'https://off.example.com/', '["*"]', 's', 1, 0, 'x', 'x');
  INSERT INTO destination_throttles (domain, concurrency, paused_until, reason, updated_at)
    VALUES ('example.net', 2, '2026-11-26T12:05:00.000Z', '421 slow down', 'x'),
           ('elsewhere.test', 1, NULL, NULL, 'x');
  INSERT INTO nodes (id, hostname, pid, version, started_at, seen_at, relay_sessions)
    VALUES ('n1', 'mta', 1, '0.1.0', 'x', '2026-11-26T12:00:25.000Z', 4),
           ('n2', 'old', 2, '0.1.0', 'x', '2026-11-26T11:00:00.000Z', 9);
  INSERT INTO email_stats (project_id, bucket_hour, type, count) VALUES ('p1', '2026-11-26T11', 'delivered', 5),
    ('p1', '2026-11-26T11', 'bounced', 1), ('p1', '2026-11-26T11', 'bounced:mailbox-full', 1)`;

/** Email i: in p2 when i % 3 is 0, else p1; LIVE and QUEUED when even, TEST and SIMULATED when odd; created T0 + i s. */
function email(i: number): NewEmail {
  return newEmail(`e${String(i).padStart(2, '0')}`, {
    project_id: i % 3 ? 'p1' : 'p2',
    env: i % 2 ? 'TEST' : 'LIVE',
    status: i % 2 ? 'SIMULATED' : 'QUEUED',
    to: [`r${i}@example.net`],
    subject: `n${i}`,
    tags: [`t${i % 2}`],
    created_at: at(T0 + i * 1000),
    event: { id: `ev-${i}`, type: i % 2 ? 'simulated' : 'queued', data: {} },
  });
}

/** Delivery's event for email `id`'s recipient at `when`, as the engine writes it. */
const delivered = (id: string, recipient: string, when: string) =>
  `INSERT INTO email_events (id, email_seq, type, data, created_at)
     SELECT 'd-${id}', seq, 'delivered', '{"recipient":"${recipient}","smtp_code":250}', '${when}' FROM emails WHERE id = '${id}'`;

describe.each(STORE_KINDS)('TopStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(SETUP);
    for (let i = 0; i < 12; i++) {
      const e = email(i);
      await s.store.emails.acceptEmail(e, [{ address: e.to[0]!, kind: 'to' }], {
        suppress: false,
        volume: null,
        idempotency: null,
      });
    }
    // An enforce MTA-STS policy for a listed destination, and an expired one for another.
    await s.exec(`INSERT INTO mta_sts_policies (domain, policy_id, mode, mx, max_age, fetched_at, expires_at)
      VALUES ('example.net', 'p1', 'enforce', '["mx.example.net"]', 86400, '2026-11-26T11:00:00.000Z', '2026-11-27T11:00:00.000Z'),
             ('elsewhere.test', 'p2', 'testing', '["mx.elsewhere.test"]', 60, '2026-11-26T11:00:00.000Z', '2026-11-26T11:01:00.000Z')`);
    await s.exec(delivered('e00', 'r0@Example.NET', '2026-11-26T12:00:20.000Z'));
    await s.exec(delivered('e02', 'r2@example.net', '2026-11-26T12:00:20.000Z'));
    await s.exec(`UPDATE recipients SET attempts = 1 WHERE address = 'r4@example.net';
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, request_body, created_at)
        VALUES ('wd1', 'w1', 'e', 'delivered', 1, 'failed', '{}', '2026-11-26T11:40:00.000Z'),
               ('wd2', 'w1', 'e', 'delivered', 2, 'failed', '{}', '2026-11-26T10:40:00.000Z')`);
  });
  afterAll(() => s?.close());
  const pending = async (project: string | null) =>
    Number(
      (
        await s.query<{ n: number }>(
          `SELECT count(*) AS n FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
           WHERE o.skip = 0 ${project ? `AND w.project_id = '${project}'` : ''}`,
        )
      )[0]!.n,
    );

  it("snapshot: the whole server's last minute, hours, queue, destinations, latest, webhooks and nodes", async () => {
    const snap = await s.store.topReader({}).snapshot({}, NOW);
    expect(snap).toMatchObject({
      at: at(NOW),
      project_id: null,
      last_minute: { queued: 6, simulated: 6, delivered: 2 },
      this_hour: { queued: 6, simulated: 6, delivered: 2 },
      previous_hour: { delivered: 5, bounced: 1 },
      queue: { recipients: 6, oldest_seconds: 30 },
      filter: {},
      webhooks: {
        pending_events: await pending(null),
        failed_last_hour: 1,
        auto_disabled: [{ id: 'w2', url: 'https://off.example.com/' }],
      },
      relay: { nodes: 1, sessions: 4 },
    });
    // Emails came in at T0 + i s: second i of the minute before NOW is index 29 + i.
    expect(snap.per_second.accepted.slice(29, 41)).toEqual(Array(12).fill(1));
    expect(snap.per_second.accepted.reduce((a, b) => a + b)).toBe(12);
    expect(snap.per_second.delivered[49]).toBe(2);
    expect(snap.destinations).toEqual([
      {
        domain: 'example.net',
        waiting: 6,
        deferred: 1,
        delivered: 2,
        bounced: 0,
        throttled: true,
        concurrency: 2,
        paused_until: '2026-11-26T12:05:00.000Z',
        reason: '421 slow down',
        mta_sts: 'enforce',
      },
      {
        domain: 'elsewhere.test',
        waiting: 0,
        deferred: 0,
        delivered: 0,
        bounced: 0,
        throttled: true,
        concurrency: 1,
        paused_until: null,
        reason: null,
        mta_sts: null,
      },
    ]);
    expect(snap.latest.map((e) => e.id)).toEqual([
      'e11',
      'e10',
      'e09',
      'e08',
      'e07',
      'e06',
      'e05',
      'e04',
      'e03',
      'e02',
    ]);
    expect(snap.latest[0]).toEqual({
      id: 'e11',
      status: 'SIMULATED',
      from_email: 'news@example.com',
      to: ['r11@example.net'],
      subject: 'n11',
      created_at: at(T0 + 11_000),
    });
  });

  it("snapshot: one project's, its throttles only for its destinations, its latest filtered", async () => {
    const snap = await s.store
      .topReader({ projectId: 'p1' })
      .snapshot({ status: 'QUEUED', to_email: 'R4@example.NET' }, NOW);
    expect(snap).toMatchObject({
      project_id: 'p1',
      last_minute: { queued: 4, simulated: 4, delivered: 1 },
      previous_hour: { delivered: 5, bounced: 1 },
      queue: { recipients: 4, oldest_seconds: 28 },
      webhooks: { pending_events: await pending('p1'), failed_last_hour: 1, auto_disabled: [] },
    });
    // The hours by event type only: not the rollup's bounces by category (bounced:<category>).
    expect(snap.previous_hour).toEqual({ delivered: 5, bounced: 1 });
    expect(snap.destinations.map((d) => [d.domain, d.waiting, d.delivered, d.throttled])).toEqual([
      ['example.net', 4, 1, true],
    ]);
    expect(snap.latest.map((e) => e.id)).toEqual(['e04']);
    const tagged = await s.store.topReader({ projectId: 'p1' }).snapshot({ tag: 't1' }, NOW);
    expect(tagged.latest.map((e) => e.id)).toEqual(['e11', 'e07', 'e05', 'e01']);
  });

  it('snapshot: a reading adds only the events written since the one before', async () => {
    const reader = s.store.topReader({});
    expect((await reader.snapshot({}, NOW)).last_minute.delivered).toBe(2);
    await s.exec(delivered('e06', 'r6@example.net', '2026-11-26T12:00:29.000Z'));
    const next = await reader.snapshot({}, NOW + 1000);
    expect(next.last_minute.delivered).toBe(3);
    // A second later, 12:00:20 is index 48 of the minute and 12:00:29 index 57.
    expect([next.per_second.delivered[48], next.per_second.delivered[57]]).toEqual([2, 1]);
    expect((await reader.snapshot({}, NOW + 2000)).last_minute.delivered).toBe(3);
    // Past the minute, the counts leave it.
    expect((await reader.snapshot({}, T0 + 85_000)).last_minute).toEqual({ delivered: 1 });
  });

  it("detail: an email's events and recipients' standing; null when none or in another project", async () => {
    const detail = await s.store.topReader({ projectId: 'p2' }).detail('e00');
    expect(detail).toMatchObject({
      id: 'e00',
      status: 'QUEUED',
      events: [
        { type: 'queued', at: at(T0), recipient: null, detail: '' },
        { type: 'delivered', at: '2026-11-26T12:00:20.000Z', recipient: 'r0@Example.NET', detail: '250' },
      ],
    });
    expect(detail!.waiting).toHaveLength(1);
    expect(detail!.waiting[0]).toContain('r0@example.net');
    expect((await s.store.topReader({}).detail('e00'))?.id).toBe('e00');
    expect(await s.store.topReader({ projectId: 'p1' }).detail('e00')).toBeNull();
    expect(await s.store.topReader({}).detail('missing')).toBeNull();
  });
});
