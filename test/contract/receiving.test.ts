// The receiving store (src/receiving/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import type { ReceivedRow, RouteRow } from '../../src/receiving/store.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const uuid = (n: number) => `0192f4c1-7c2e-7b3a-9d4e-${String(n).padStart(12, '0')}`;
const audited = (action: string): Audited => ({
  actor: { type: 'cli', os_user: 'ops' },
  atMs: Date.parse(AT),
  entry: { action, project_id: 'p1', target_type: 'route', target_id: 'r', before: null, after: null },
});

const route = (n: number, over: Partial<RouteRow> = {}): RouteRow => ({
  id: uuid(n),
  project_id: 'p1',
  domain_id: 'd1',
  domain: 'in.test',
  kind: 'exact',
  local_part: `a${n}`,
  action: 'hold',
  webhook_id: null,
  forward_to: null,
  created_at: AT,
  updated_at: AT,
  ...over,
});

const received = (n: number, over: Partial<ReceivedRow> = {}): ReceivedRow => ({
  id: uuid(100 + n),
  project_id: 'p1',
  route_id: uuid(1),
  action: 'hold',
  outcome: 'held',
  detail: null,
  forwarded_email_id: null,
  mail_from: 'ada@outside.test',
  rcpt_to: JSON.stringify([`a1@in.test`]),
  remote_ip: '127.0.0.1',
  helo: 'mail.outside.test',
  from_email: 'ada@outside.test',
  to_emails: JSON.stringify(['a1@in.test']),
  subject: `Subject ${n}`,
  message_id: `m${n}@outside.test`,
  size: 12,
  auth: '{}',
  received_at: `2026-11-26T12:00:0${n}.000Z`,
  ...over,
});

describe.each(STORE_KINDS)('ReceivingStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(`INSERT INTO domains (id, organization_id, name, created_at) VALUES ('d1', 'o1', 'in.test', '${AT}')`);
    await s.exec(
      `INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
       VALUES ('w1', 'p1', 'https://h.test/', '["*"]', 's', '${AT}', '${AT}')`,
    );
  });
  afterAll(() => s?.close());

  it('routes: create (a pattern once), find, list, update, remove, each audited', async () => {
    const r = s.store.receiving;
    await r.createRoute(route(1), audited('route.create'));
    await r.createRoute(route(2, { kind: 'catchall', local_part: '' }), audited('route.create'));
    await expect(r.createRoute(route(3, { local_part: 'a1' }), audited('route.create'))).rejects.toThrow();
    expect(await r.findRoute(uuid(1))).toEqual(route(1));
    expect(await r.findRoute(uuid(9))).toBeUndefined();
    expect((await r.listRoutes('p1')).map((x) => x.id)).toEqual([uuid(1), uuid(2)]);
    const changed = route(1, { action: 'forward', forward_to: '["x@y.test"]', updated_at: '2026-11-27T00:00:00.000Z' });
    await r.updateRoute(changed, audited('route.update'));
    expect(await r.findRoute(uuid(1))).toEqual(changed);
    expect(await r.removeRoute(uuid(2), audited('route.delete'))).toBe(true);
    expect(await r.removeRoute(uuid(2), audited('route.delete'))).toBe(false);
    const actions = await s.query<{ action: string }>(
      "SELECT action FROM audit_logs WHERE action LIKE 'route.%' ORDER BY created_at, action",
    );
    expect(actions.map((a) => a.action).sort()).toEqual([
      'route.create',
      'route.create',
      'route.delete',
      'route.update',
    ]);
  });

  it("routesAt: a domain's routes only while it receives; setReceiving turns it on and off", async () => {
    const r = s.store.receiving;
    expect(await r.routesAt('in.test')).toEqual([]);
    expect(await r.setReceiving('d1', true, audited('domain.receiving'))).toBe(true);
    expect((await r.routesAt('in.test')).map((x) => x.id)).toEqual([uuid(1)]);
    expect(await r.routesAt('other.test')).toEqual([]);
    expect(await r.setReceiving('nope', true, audited('domain.receiving'))).toBe(false);
  });

  it('receive stores the message and its event together; rawOf, findReceived, recordForward, eventProgress', async () => {
    const r = s.store.receiving;
    const raw = Buffer.from('Subject: x\r\n\r\nbody\r\n');
    const event = {
      id: uuid(500),
      webhook_id: 'w1',
      event_id: uuid(101),
      event_type: 'email.received' as const,
      payload: '{"type":"email.received"}',
      next_attempt_at: AT,
      created_at: AT,
    };
    await r.receive(received(1, { action: 'webhook', outcome: 'queued' }), raw, event);
    await r.receive(received(2, { action: 'forward', subject: 'Invoice 100%' }), raw, null);
    expect(await r.findReceived('p1', uuid(101))).toEqual(received(1, { action: 'webhook', outcome: 'queued' }));
    expect(await r.findReceived('p2', uuid(101))).toBeUndefined();
    expect((await r.rawOf(uuid(101)))!.equals(raw)).toBe(true);
    expect(await r.rawOf(uuid(999))).toBeUndefined();
    expect(await r.eventProgress([uuid(101), uuid(102)])).toEqual(
      new Map([[uuid(101), { status: 'pending', attempts: 0 }]]),
    );
    // Once the event is out of the outbox, its last record says how it went.
    await s.exec(`DELETE FROM webhook_outbox WHERE event_id = '${uuid(101)}'`);
    await s.exec(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, request_body, created_at)
       VALUES ('${uuid(600)}', 'w1', '${uuid(101)}', 'email.received', 2, 'succeeded', '{}', '${AT}')`,
    );
    expect(await r.eventProgress([uuid(101)])).toEqual(new Map([[uuid(101), { status: 'succeeded', attempts: 2 }]]));
    await r.recordForward(uuid(102), 'forwarded', null, uuid(700));
    expect(await r.findReceived('p1', uuid(102))).toMatchObject({
      outcome: 'forwarded',
      forwarded_email_id: uuid(700),
    });
  });

  it('listReceived: newest first, by route, outcome, time, q (LIKE wildcards literal) and page', async () => {
    const r = s.store.receiving;
    await r.receive(received(3, { outcome: 'failed', route_id: uuid(2) }), Buffer.from('x'), null);
    const ids = async (f: Parameters<typeof r.listReceived>[1], limit = 10) =>
      (await r.listReceived('p1', f, limit)).map((x) => x.id);
    expect(await ids({})).toEqual([uuid(103), uuid(102), uuid(101)]);
    expect(await ids({}, 1)).toEqual([uuid(103)]);
    expect(await ids({ before: uuid(103) })).toEqual([uuid(102), uuid(101)]);
    expect(await ids({ route_id: uuid(2) })).toEqual([uuid(103)]);
    expect(await ids({ outcome: 'forwarded' })).toEqual([uuid(102)]);
    expect(await ids({ q: '100%' })).toEqual([uuid(102)]);
    expect(await ids({ q: '1_0' })).toEqual([]);
    expect(await ids({ q: 'ADA@OUTSIDE' })).toEqual([uuid(103), uuid(102), uuid(101)]);
    expect(await ids({ from: '2026-11-26T12:00:02.000Z', to: '2026-11-26T12:00:02.000Z' })).toEqual([uuid(102)]);
    expect(await r.listReceived('p2', {}, 10)).toEqual([]);
  });

  it('deleteReceived (with its pending event) and deleteReceivedBefore', async () => {
    const r = s.store.receiving;
    await s.exec(
      `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
       VALUES ('${uuid(501)}', 'w1', '${uuid(103)}', 'email.received', '{}', '${AT}', '${AT}')`,
    );
    expect(await r.deleteReceived('p2', uuid(103), audited('received_email.delete'))).toBe(false);
    expect(await r.deleteReceived('p1', uuid(103), audited('received_email.delete'))).toBe(true);
    expect(await s.query(`SELECT id FROM webhook_outbox WHERE event_id = '${uuid(103)}'`)).toEqual([]);
    expect(await r.deleteReceivedBefore('2026-11-26T12:00:02.000Z', 10)).toBe(1);
    expect((await r.listReceived('p1', {}, 10)).map((x) => x.id)).toEqual([uuid(102)]);
  });
});
