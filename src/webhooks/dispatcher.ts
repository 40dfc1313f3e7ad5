import type { Dispatcher } from 'undici';
import { iso, type Clock, type Timer } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import type { LeasedDueRow, WebhooksStore } from './store.ts';
import { postSigned } from './send.ts';
import { checkWebhookUrl } from './url-check.ts';

export interface DispatcherOptions {
  /** Waits between attempts (decisions.md: 1 m, 5 m, 30 m, 2 h: five attempts in all). */
  retrySchedule: number[];
  allowInsecure: boolean;
  /** How often due events are looked for. */
  tickMs: number;
  /** POSTs in flight at once. */
  concurrency: number;
  /**
   * While `busy` says the accept is busy, due events wait until the oldest is this old:
   * a burst of sends is answered first and its webhooks follow it (decisions.md).
   */
  maxLagMs: number;
}

/** Five events in a row that used every attempt deactivate the webhook (contract, rule 3). */
const DISABLE_AFTER = 5;

/** Counters for `svc top` and /metrics. */
export interface DispatcherStats {
  attempts: { succeeded: number; failed: number; refused: number };
  autoDisabled: number;
}

/**
 * How long a claim holds its outbox rows from other nodes (PostgreSQL): an attempt takes at
 * most its 10 s timeout and a commit, so a row still held after this was left by a node that
 * died, and another takes it.
 */
const LEASE_MS = 60_000;

/**
 * Sends the outbox: takes due rows not in flight, POSTs each once through the
 * guarded agent, records the attempt, and schedules the next or ends the event.
 * One POST per (event, webhook); order per webhook is not promised.
 */
export function createWebhookDispatcher(
  deps: {
    repo: WebhooksStore;
    clock: Clock;
    logger: Logger;
    agent: Dispatcher;
    busy?: () => boolean;
    /**
     * Resolves once what this connection can see is on disk. The dispatch thread reads the events
     * another connection committed, which may not be synced yet (store/wal-sync.ts): none is
     * POSTed before it is.
     */
    durable?: () => Promise<void>;
  },
  opts: DispatcherOptions,
) {
  const { repo, clock, logger, agent } = deps;
  const stats: DispatcherStats = { attempts: { succeeded: 0, failed: 0, refused: 0 }, autoDisabled: 0 };
  const inflight = new Set<Promise<void>>();
  /** Outbox rows being attempted or recorded now (by seq): the next claim skips them. */
  const busy = new Set<number>();
  /** POSTs on the wire now: the slots of `concurrency`. An attempt frees its slot once
   * answered, before its record commits, so the commit's wait costs no sending. */
  let posting = 0;
  const freeSlots = () => opts.concurrency - posting;
  let timer: Timer | undefined;
  let ticking: Promise<void> | undefined;
  let stopped = false;

  async function tick(): Promise<void> {
    const free = freeSlots();
    if (free <= 0 || stopped) return;
    const now = clock.now();
    if (deps.busy?.()) {
      // The threads that accept email are busy: webhooks wait, unless one has waited maxLagMs.
      const oldest = await repo.oldestDue(iso(now));
      if (oldest === undefined || now - Date.parse(oldest) < opts.maxLagMs) return;
    }
    const rows = await repo.claimDue(iso(now), free, LEASE_MS, busy);
    if (rows.length > 0) await deps.durable?.();
    for (const row of rows) {
      busy.add(row.seq);
      posting++;
      let slot = true;
      // Slots freed: claim again at once, so a backlog drains at the receivers' pace, not the
      // timer's; in batches of a quarter of the slots, so claims stay few.
      const release = () => {
        if (!slot) return;
        slot = false;
        posting--;
        if (!stopped && freeSlots() >= Math.max(1, opts.concurrency / 4)) kick();
      };
      const p = attempt(row, release).catch((e: unknown) =>
        logger.error({ err: e, webhook_id: row.webhook_id }, 'webhook attempt failed'),
      );
      inflight.add(p);
      void p.finally(() => {
        inflight.delete(p);
        busy.delete(row.seq);
        release();
      });
    }
  }

  /** Runs a claim now, or once more right after the one running (never two at once). */
  let again = false;
  function kick(): void {
    if (ticking) {
      again = true;
      return;
    }
    ticking = tick()
      .catch((e: unknown) => logger.error({ err: e }, 'claiming webhook events failed'))
      .finally(() => {
        ticking = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
  }

  /** One attempt of one row; `answered` is called once no POST of it is on the wire. */
  async function attempt(row: LeasedDueRow, answered: () => void): Promise<void> {
    const sends = row.payload !== null && row.skip !== 1 && row.is_active === 1;
    // A row that is only recorded never takes a POST's slot.
    if (!sends) answered();
    if (row.payload === null) {
      logger.warn({ webhook_id: row.webhook_id, event_id: row.event_id }, 'webhook event dropped: its email is gone');
      await repo.drop(row.seq, row.lease);
      return;
    }
    const payload = row.payload;
    const number = row.attempts + 1;
    const now = clock.now();
    const base = {
      id: newId(now),
      webhook_id: row.webhook_id,
      event_id: row.event_id,
      event_type: row.event_type,
      attempt: number,
      request_body: payload,
      created_at: iso(now),
    };
    if (row.skip === 1 || row.is_active !== 1) {
      // Inactive when the event happened, or deactivated since: kept as skipped, not sent.
      const skipped = { ...base, status: 'skipped' as const, http_status: null, duration_ms: null, error: null };
      await repo.recordSkipped(row.seq, row.lease, { ...skipped, response_body: null, next_attempt_at: null });
      return;
    }
    let out;
    try {
      checkWebhookUrl(row.url, { allowInsecure: opts.allowInsecure });
      // The header is the event's uuid; the body's `id` is `evt_` and the same uuid (contract).
      out = await postSigned(agent, row.url, row.secret, row.event_id, payload, now);
    } catch (e) {
      // The URL no longer passes the static check (the guard was tightened since it was saved).
      out = {
        ok: false,
        http_status: 0,
        duration_ms: 0,
        error: (e as Error).message,
        response_body: null,
        refused: true,
      };
    }
    answered();
    const wait = opts.retrySchedule[number - 1];
    const exhausted = !out.ok && wait === undefined;
    const next = out.ok || exhausted ? null : iso(clock.now() + wait!);
    const stillActive = await repo.recordAttempt(row.seq, row.lease, {
      record: {
        ...base,
        status: out.ok ? 'succeeded' : 'failed',
        http_status: out.http_status === 0 ? null : out.http_status,
        duration_ms: out.duration_ms,
        error: out.error,
        response_body: out.response_body,
        next_attempt_at: next,
      },
      next,
      exhausted,
      disableAfter: DISABLE_AFTER,
    });
    if (out.ok) stats.attempts.succeeded++;
    else if (out.refused) stats.attempts.refused++;
    else stats.attempts.failed++;
    // Logs name the webhook, never its secret.
    const fields = {
      webhook_id: row.webhook_id,
      event_id: row.event_id,
      attempt: number,
      http_status: out.http_status,
    };
    if (!out.ok) logger.warn({ ...fields, error: out.error, next_attempt_at: next }, 'webhook attempt failed');
    if (!stillActive) {
      stats.autoDisabled++;
      logger.warn(
        { webhook_id: row.webhook_id },
        `webhook deactivated: ${DISABLE_AFTER} events in a row used every attempt`,
      );
    }
  }

  return {
    stats,
    /** Starts sending. */
    start(): Promise<void> {
      timer = clock.setInterval(kick, opts.tickMs);
      return Promise.resolve();
    },
    /** One pass now, and waits for what it started (tests). */
    async runOnce(): Promise<void> {
      await tick();
      await Promise.all([...inflight]);
      await ticking;
      await Promise.all([...inflight]);
    },
    /** Stops claiming and waits for the attempts in flight (each at most 10 s). */
    async stop(): Promise<void> {
      stopped = true;
      timer?.cancel();
      await ticking;
      await Promise.all([...inflight]);
    },
    pending: () => repo.pendingCount(),
    autoDisabled: () => repo.autoDisabledCount(),
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
