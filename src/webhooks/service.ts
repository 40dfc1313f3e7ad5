import { randomBytes, randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId } from '../lib/ids.ts';
import { PLAN_LIMITS, planLimitError, type Plan } from '../limits/index.ts';
import { parseInput } from '../validation.ts';
import type { WebhookRow, WebhooksStore } from './store.ts';
import {
  createWebhookSchema,
  listDeliveriesQuerySchema,
  updateWebhookSchema,
  type Delivery,
  type TestResult,
  type Webhook,
} from './schema.ts';
import { postSigned } from './send.ts';
import { checkWebhookUrl } from './url-check.ts';

export interface WebhooksDeps {
  repo: WebhooksStore;
  clock: Clock;
  /** The plan of a project's organization, for the webhook ceiling. */
  planOf: (projectId: string) => Promise<Plan>;
  /** The guarded keep-alive agent every POST goes through, made on the first one (undici loads then). */
  agent: () => Promise<Dispatcher>;
  allowInsecure: boolean;
}

/** decisions.md: manual redelivery, 10 per minute per webhook. */
const REDELIVER_PER_MINUTE = 10;

/** `whsec_` + 64 hex (contract, rule 5). */
const newSecret = () => `whsec_${randomBytes(32).toString('hex')}`;

export function toWebhook(r: WebhookRow, secret = false): Webhook {
  return {
    id: r.id,
    project_id: r.project_id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    is_active: r.is_active === 1,
    auto_disabled: r.auto_disabled === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
    ...(secret ? { secret: r.secret } : {}),
  };
}

/** Webhook subscriptions: create, change, rotate, test, and their delivery records. */
export function createWebhooksService({ repo, clock, planOf, agent, allowInsecure }: WebhooksDeps) {
  const redeliveries = new Map<string, number[]>();
  const audited = (actor: Actor, action: string, w: WebhookRow, before: unknown, after: unknown): Audited => ({
    actor,
    atMs: clock.now(),
    entry: { action, project_id: w.project_id, target_type: 'webhook', target_id: w.id, before, after },
  });
  /** What the audit log keeps of a webhook: never its secret. */
  const shown = (w: WebhookRow) => toWebhook(w);

  async function getRow(projectId: string, id: string): Promise<WebhookRow> {
    const row = isUuid(id) ? await repo.findById(id) : undefined;
    if (!row || row.project_id !== projectId) throw new AppError('not_found', `no webhook ${id}`);
    return row;
  }

  return {
    async create(projectId: string, input: unknown, actor: Actor = operator()): Promise<Webhook> {
      const data = parseInput(createWebhookSchema, input);
      const url = checkWebhookUrl(data.url, { allowInsecure }).href;
      const now = iso(clock.now());
      const row: WebhookRow = {
        id: newId(clock.now()),
        project_id: projectId,
        url,
        events: JSON.stringify(data.events),
        secret: newSecret(),
        is_active: 1,
        auto_disabled: 0,
        exhausted_in_a_row: 0,
        created_at: now,
        updated_at: now,
      };
      const plan = await planOf(projectId);
      const max = PLAN_LIMITS[plan].webhooks;
      if (!(await repo.create(row, max, audited(actor, 'webhook.create', row, null, shown(row))))) {
        throw planLimitError('webhooks', plan, max!);
      }
      return toWebhook(row, true);
    },

    async list(projectId: string): Promise<Webhook[]> {
      return (await repo.listOfProject(projectId)).map((r) => toWebhook(r));
    },

    async get(projectId: string, id: string): Promise<Webhook> {
      return toWebhook(await getRow(projectId, id));
    },

    /** Only supplied fields change; `is_active: true` reactivates an auto-disabled webhook. */
    async update(projectId: string, id: string, input: unknown, actor: Actor = operator()): Promise<Webhook> {
      const data = parseInput(updateWebhookSchema, input);
      const row = await getRow(projectId, id);
      const next: WebhookRow = {
        ...row,
        ...(data.url !== undefined ? { url: checkWebhookUrl(data.url, { allowInsecure }).href } : {}),
        ...(data.events ? { events: JSON.stringify(data.events) } : {}),
        ...(data.is_active !== undefined
          ? { is_active: data.is_active ? 1 : 0, auto_disabled: 0, exhausted_in_a_row: 0 }
          : {}),
        updated_at: iso(clock.now()),
      };
      await repo.update(next, audited(actor, 'webhook.update', row, shown(row), shown(next)));
      return toWebhook(next);
    },

    async remove(projectId: string, id: string, actor: Actor = operator()): Promise<void> {
      const row = await getRow(projectId, id);
      await repo.remove(row.id, audited(actor, 'webhook.delete', row, shown(row), null));
    },

    /** A new secret; the old one signs nothing from now on (contract: "old secret invalid at once"). */
    async rotateSecret(projectId: string, id: string, actor: Actor = operator()): Promise<{ secret: string }> {
      const row = await getRow(projectId, id);
      const next = { ...row, secret: newSecret(), updated_at: iso(clock.now()) };
      await repo.update(next, audited(actor, 'webhook.rotate_secret', row, null, { rotated: true }));
      return { secret: next.secret };
    },

    /** Sends a signed `test.ping` now and says how it went; nothing is stored or retried. */
    async test(projectId: string, id: string): Promise<TestResult> {
      const row = await getRow(projectId, id);
      const now = clock.now();
      const body = JSON.stringify({
        id: 'evt_test_ping',
        type: 'test.ping',
        created_at: new Date(now).toISOString().replace('Z', '000Z'),
        data: { message: 'This is a test event from svc.' },
      });
      checkWebhookUrl(row.url, { allowInsecure });
      // Each ping is an event of its own: a fresh uuid in the header, so a receiver that drops
      // repeats by it takes every ping; the body keeps the contract's `evt_test_ping` (decisions.md).
      const out = await postSigned(await agent(), row.url, row.secret, randomUUID(), body, now);
      return { success: out.ok, http_status: out.http_status, error: out.error };
    },

    /** Attempt records (and events waiting for their first attempt), newest first. */
    async deliveries(projectId: string, id: string, query: unknown): Promise<Delivery[]> {
      const q = parseInput(listDeliveriesQuerySchema, query);
      const row = await getRow(projectId, id);
      const from = q.from && new Date(q.from).toISOString();
      const to = q.to && new Date(q.to).toISOString();
      return repo.listDeliveries(row.id, { status: q.status, from, to }, q.limit, q.offset);
    },

    async delivery(projectId: string, id: string, deliveryId: string): Promise<Delivery> {
      const row = await getRow(projectId, id);
      const d = isUuid(deliveryId) ? await repo.findDelivery(row.id, deliveryId) : undefined;
      if (!d) throw new AppError('not_found', `no delivery ${deliveryId}`);
      return d;
    },

    /**
     * Queues a new attempt of a recorded event, due now; history is not rewritten.
     * 10 a minute per webhook (429 rate_limited); the URL guard runs again at send.
     */
    async redeliver(projectId: string, id: string, deliveryId: string, actor: Actor = operator()) {
      const row = await getRow(projectId, id);
      const d = isUuid(deliveryId) ? await repo.findDelivery(row.id, deliveryId) : undefined;
      if (!d) throw new AppError('not_found', `no delivery ${deliveryId}`);
      const now = clock.now();
      const recent = (redeliveries.get(row.id) ?? []).filter((t) => t > now - 60_000);
      if (recent.length >= REDELIVER_PER_MINUTE) {
        const retryAfter = Math.ceil((recent[0]! + 60_000 - now) / 1000);
        throw new AppError(
          'rate_limited',
          `at most ${REDELIVER_PER_MINUTE} redeliveries a minute per webhook`,
          { retry_after: retryAfter },
          retryAfter,
        );
      }
      redeliveries.set(row.id, [...recent, now]);
      checkWebhookUrl(row.url, { allowInsecure });
      const queued = {
        id: newId(now),
        webhook_id: row.id,
        event_id: d.event_id,
        event_type: d.event_type,
        payload: d.request_body,
        next_attempt_at: iso(now),
        created_at: iso(now),
      };
      const after = { event_id: d.event_id, from_delivery: d.id };
      await repo.enqueue(queued, audited(actor, 'webhook.redeliver', row, null, after));
      return {
        id: queued.id,
        status: 'pending' as const,
        event_id: d.event_id,
        next_attempt_at: queued.next_attempt_at,
      };
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
