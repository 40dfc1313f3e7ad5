// The webhooks store (src/webhooks/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import type { AttemptResult, DeliveryRow, WebhookRow } from '../../src/webhooks/store.ts';
import { newEmail } from '../postgres/email-fixture.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T13:00:00.000Z';

const audited = (target: string, action = 'webhook.test'): Audited => ({
  actor: { type: 'cli', os_user: 'op' },
  atMs: Date.parse(AT),
  entry: { action, organization_id: 'o1', target_type: 'webhook', target_id: target, before: null, after: null },
});

const hook = (id: string, over: Partial<WebhookRow> = {}): WebhookRow => ({
  id,
  project_id: 'p1',
  url: `https://hooks.example.com/${id}`,
  events: '["email.delivered"]',
  secret: `whsec_${id}`,
  is_active: 1,
  auto_disabled: 0,
  exhausted_in_a_row: 0,
  created_at: AT,
  updated_at: AT,
  ...over,
});

const record = (id: string, webhookId: string, over: Partial<DeliveryRow> = {}): DeliveryRow => ({
  id,
  webhook_id: webhookId,
  event_id: `ev-${id}`,
  event_type: 'email.delivered',
  attempt: 1,
  status: 'failed',
  http_status: 500,
  duration_ms: 12,
  error: null,
  request_body: '{"a":1}',
  response_body: null,
  created_at: AT,
  next_attempt_at: null,
  ...over,
});

describe.each(STORE_KINDS)('WebhooksStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
  });
  afterAll(() => s?.close());

  const actions = async (target: string) =>
    (await s.query<{ action: string }>(`SELECT action FROM audit_logs WHERE target_id = '${target}'`)).map(
      (r) => r.action,
    );
  const enqueue = (id: string, webhookId: string, due = AT) =>
    s.store.webhooks.enqueue(
      {
        id,
        webhook_id: webhookId,
        event_id: `ev-${id}`,
        event_type: 'email.delivered',
        payload: `{"id":"${id}"}`,
        next_attempt_at: due,
        created_at: AT,
      },
      audited(id, 'webhook.redeliver'),
    );
  const outbox = (webhookId: string) =>
    s.query<{ id: string; attempts: number; next_attempt_at: string; payload: string }>(
      `SELECT id, attempts, next_attempt_at, payload FROM webhook_outbox WHERE webhook_id = '${webhookId}' ORDER BY seq`,
    );

  it('create: inserts the webhook with its audit row; false and nothing written at the ceiling', async () => {
    expect(await s.store.webhooks.create(hook('w1'), 2, audited('w1', 'webhook.create'))).toBe(true);
    expect(await s.store.webhooks.create(hook('w2'), null, audited('w2', 'webhook.create'))).toBe(true);
    expect(await s.store.webhooks.create(hook('w3'), 2, audited('w3', 'webhook.create'))).toBe(false);
    expect(await s.store.webhooks.findById('w3')).toBeUndefined();
    expect(await actions('w1')).toEqual(['webhook.create']);
    expect(await actions('w3')).toEqual([]);
  });

  it('findById: the webhook as stored, undefined when absent', async () => {
    expect(await s.store.webhooks.findById('w1')).toEqual(hook('w1'));
    expect(await s.store.webhooks.findById('missing')).toBeUndefined();
  });

  it("listOfProject: the project's webhooks in creation order", async () => {
    expect((await s.store.webhooks.listOfProject('p1')).map((w) => w.id)).toEqual(['w1', 'w2']);
    expect(await s.store.webhooks.listOfProject('other')).toEqual([]);
  });

  it('update: writes every mutable field and the audit row', async () => {
    const next = hook('w2', {
      url: 'https://hooks.example.com/new',
      is_active: 0,
      secret: 'whsec_new',
      updated_at: LATER,
    });
    await s.store.webhooks.update(next, audited('w2', 'webhook.update'));
    expect(await s.store.webhooks.findById('w2')).toEqual(next);
    expect(await actions('w2')).toEqual(['webhook.create', 'webhook.update']);
  });

  it('anyWebhook: true once a webhook exists', async () => {
    expect(await s.store.webhooks.anyWebhook()).toBe(true);
  });

  it('enqueue: a new outbox row with the given body, and its audit row', async () => {
    await enqueue('o1', 'w1');
    expect(await outbox('w1')).toEqual([{ id: 'o1', attempts: 0, next_attempt_at: AT, payload: '{"id":"o1"}' }]);
    expect(await actions('o1')).toEqual(['webhook.redeliver']);
  });

  it('pendingCount: the events waiting, due or not', async () => {
    await enqueue('o2', 'w1', LATER);
    expect(await s.store.webhooks.pendingCount()).toBe(2);
  });

  it('oldestDue: when the longest-waiting due event fell due; undefined when none is due', async () => {
    expect(await s.store.webhooks.oldestDue(LATER)).toBe(AT);
    expect(await s.store.webhooks.oldestDue('2026-11-26T11:00:00.000Z')).toBeUndefined();
  });

  const inFlight = new Set<number>();
  it('claimDue: due rows oldest first, with their webhook and body, at most limit', async () => {
    const rows = await s.store.webhooks.claimDue(LATER, 1, 60_000, new Set());
    for (const r of rows) inFlight.add(r.seq);
    expect(rows.map((r) => [r.id, r.url, r.secret, r.is_active, r.payload])).toEqual([
      ['o1', 'https://hooks.example.com/w1', 'whsec_w1', 1, '{"id":"o1"}'],
    ]);
  });

  it('recordAttempt: a failure stores the record and retries the row with the same body', async () => {
    // The row claimed above is in flight: SQLite's dispatcher skips it, PostgreSQL's lease holds it.
    const [row] = await s.store.webhooks.claimDue('2026-11-26T14:00:00.000Z', 10, 60_000, inFlight);
    expect(row!.id).toBe('o2');
    const r: AttemptResult = {
      record: { ...record('d1', 'w1', { request_body: '{"id":"o2"}' }), status: 'failed' },
      next: '2026-11-26T15:00:00.000Z',
      exhausted: false,
      disableAfter: 2,
    };
    expect(await s.store.webhooks.recordAttempt(row!.seq, row!.lease, r)).toBe(true);
    expect((await outbox('w1')).find((o) => o.id === 'o2')).toEqual({
      id: 'o2',
      attempts: 1,
      next_attempt_at: '2026-11-26T15:00:00.000Z',
      payload: '{"id":"o2"}',
    });
    expect((await s.store.webhooks.findDelivery('w1', 'd1'))?.next_attempt_at).toBe('2026-11-26T15:00:00.000Z');
  });

  it('recordAttempt: exhausted events in a row deactivate the webhook; the row is gone', async () => {
    await s.store.webhooks.create(hook('w4'), null, audited('w4'));
    await enqueue('o4', 'w4');
    const [row] = (await s.store.webhooks.claimDue(AT, 10, 60_000, new Set())).filter((r) => r.id === 'o4');
    const r: AttemptResult = {
      record: { ...record('d4', 'w4'), status: 'failed' },
      next: null,
      exhausted: true,
      disableAfter: 1,
    };
    expect(await s.store.webhooks.recordAttempt(row!.seq, row!.lease, r)).toBe(false);
    expect(await outbox('w4')).toEqual([]);
    const w = await s.store.webhooks.findById('w4');
    expect([w?.is_active, w?.auto_disabled, w?.exhausted_in_a_row]).toEqual([0, 1, 1]);
  });

  it('autoDisabledCount: the webhooks deactivated by failures', async () => {
    expect(await s.store.webhooks.autoDisabledCount()).toBe(1);
  });

  it('recordSkipped: the record written and the outbox row deleted', async () => {
    await enqueue('o5', 'w4');
    const [row] = (await s.store.webhooks.claimDue(AT, 10, 60_000, new Set())).filter((r) => r.id === 'o5');
    await s.store.webhooks.recordSkipped(
      row!.seq,
      row!.lease,
      record('d5', 'w4', { status: 'skipped' as DeliveryRow['status'], http_status: null }),
    );
    expect(await outbox('w4')).toEqual([]);
    expect((await s.store.webhooks.findDelivery('w4', 'd5'))?.status).toBe('skipped');
  });

  it('drop: the outbox row deleted, nothing recorded', async () => {
    await enqueue('o6', 'w4');
    const [row] = (await s.store.webhooks.claimDue(AT, 10, 60_000, new Set())).filter((r) => r.id === 'o6');
    await s.store.webhooks.drop(row!.seq, row!.lease);
    expect(await outbox('w4')).toEqual([]);
  });

  it("findDelivery: the record; undefined when absent or another webhook's", async () => {
    expect((await s.store.webhooks.findDelivery('w4', 'd4'))?.status).toBe('failed');
    expect(await s.store.webhooks.findDelivery('w1', 'd4')).toBeUndefined();
    expect(await s.store.webhooks.findDelivery('w4', 'missing')).toBeUndefined();
  });

  it("listDeliveries: the webhook's records newest first, filtered", async () => {
    const all = await s.store.webhooks.listDeliveries('w4', {}, 10, 0);
    expect(all.map((d) => d.id)).toEqual(['d5', 'd4']);
    expect((await s.store.webhooks.listDeliveries('w4', { status: 'failed' }, 10, 0)).map((d) => d.id)).toEqual(['d4']);
    expect((await s.store.webhooks.listDeliveries('w4', {}, 1, 1)).map((d) => d.id)).toEqual(['d4']);
    expect(await s.store.webhooks.listDeliveries('w4', { from: LATER }, 10, 0)).toEqual([]);
  });

  it('deleteDeliveriesBefore: deletes the records older than the cutoff, in batches', async () => {
    const first = await s.store.webhooks.deleteDeliveriesBefore(LATER, 0, 2);
    expect([first.changed, first.done]).toEqual([2, false]);
    const rest = await s.store.webhooks.deleteDeliveriesBefore(LATER, first.next, 2);
    expect([rest.changed, rest.done]).toEqual([1, true]);
    expect(await s.query('SELECT id FROM webhook_deliveries')).toEqual([]);
  });

  it('remove: deletes the webhook and its outbox rows with the audit row; false when absent', async () => {
    expect(await s.store.webhooks.remove('w1', audited('w1', 'webhook.delete'))).toBe(true);
    expect(await s.store.webhooks.findById('w1')).toBeUndefined();
    expect(await outbox('w1')).toEqual([]);
    expect(await actions('w1')).toEqual(['webhook.create', 'webhook.delete']);
    expect(await s.store.webhooks.remove('w1', audited('w1', 'webhook.delete'))).toBe(false);
  });

  it("claimDue: an event's body is the contract's push shape, the same bytes on both stores", async () => {
    await s.store.webhooks.create(hook('w9', { events: '["*"]' }), null, audited('w9', 'webhook.create'));
    const e = newEmail('e9', { to: ['a@x.test'], subject: 'Hi "there" é', tags: ['t1'] });
    await s.store.emails.acceptEmail(e, [{ address: 'a@x.test', kind: 'to' }], {
      suppress: false,
      volume: null,
      idempotency: null,
    });
    // A click carries where it came from, set after the event's own data.
    await s.exec(`INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
      SELECT 'ev-click', seq, 'clicked', '{"url":"https://x.test/a","n":1.5}', '192.0.2.1', 'UA/1',
        '2026-11-26T12:00:01.123Z' FROM emails WHERE id = 'e9'`);
    const rows = (await s.store.webhooks.claimDue(LATER, 50, 60_000, new Set())).filter((r) => r.webhook_id === 'w9');
    expect(rows.map((r) => r.payload)).toEqual([
      '{"id":"evt_ev-e9","type":"email.queued","created_at":"2026-11-26T12:00:00.000000Z","data":{"email":' +
        '{"id":"e9","from":"news@example.com","to":["a@x.test"],"subject":"Hi \\"there\\" é","tags":["t1"],' +
        '"status":"QUEUED"},"event":{}}}',
      '{"id":"evt_ev-click","type":"email.clicked","created_at":"2026-11-26T12:00:01.123000Z","data":{"email":' +
        '{"id":"e9","from":"news@example.com","to":["a@x.test"],"subject":"Hi \\"there\\" é","tags":["t1"],' +
        '"status":"QUEUED"},"event":{"url":"https://x.test/a","n":1.5,"ip":"192.0.2.1","user_agent":"UA/1"}}}',
    ]);
  });
});
