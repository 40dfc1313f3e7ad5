import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import { retentionCut } from './repo.ts';
import { dueRowOf, type DueParts } from './payload.ts';
import type { AttemptResult, LeasedDueRow, OutboxRow, WebhookRow, WebhooksStore } from './store.ts';
import type { Delivery } from './schema.ts';

const DELIVERY = `SELECT id, webhook_id, event_id, event_type, attempt, status, http_status, duration_ms, error,
                         request_body, response_body, created_at, next_attempt_at FROM webhook_deliveries`;

/**
 * Webhooks, their outbox and their delivery records on PostgreSQL (repo.ts), for several
 * nodes. SQLite's one dispatcher keeps the rows in flight in memory; here a dispatcher claims
 * due rows by moving their due time forward by a lease (`FOR UPDATE SKIP LOCKED`), and writes
 * an attempt's result only while its lease is the row's due time. A node that died leaves rows
 * that fall due again when their lease runs out.
 */
/** A WebhookRow's columns: the table's seq is PostgreSQL's alone and stays out of the row, as on SQLite. */
const WEBHOOK_COLUMNS =
  'id, project_id, url, events, secret, is_active, auto_disabled, exhausted_in_a_row, created_at, updated_at';

export function createPgWebhooksRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): WebhooksStore {
  const log = (t: PgTx, a: Audited | undefined) => (a ? audit.record(t, a.actor, a.entry, a.atMs) : undefined);
  const insertRecord = (t: PgTx, r: Delivery | (Omit<Delivery, 'status'> & { status: string })) =>
    t.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, http_status, duration_ms,
         error, request_body, response_body, created_at, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        r.id,
        r.webhook_id,
        r.event_id,
        r.event_type,
        r.attempt,
        r.status,
        r.http_status,
        r.duration_ms,
        r.error,
        r.request_body,
        r.response_body,
        r.created_at,
        r.next_attempt_at,
      ],
    );
  /** Deletes the row if this claim still holds it. */
  const done = (t: PgTx, seq: number, lease: string) =>
    t.query('DELETE FROM webhook_outbox WHERE seq = $1 AND next_attempt_at = $2', [seq, lease]);
  const count = async (sql: string, params: unknown[] = []) =>
    (await pool.query<{ n: number }>(sql, params)).rows[0]!.n;

  return {
    /**
     * One batch of retention (`--email-retention`): the attempt records written before
     * `cutoff`, in seq order from after `afterSeq` (they are written in time order).
     */
    deleteDeliveriesBefore: (cutoff: string, afterSeq: number, limit: number) =>
      tx.write(async (t) => {
        const rows = (
          await t.query<{ seq: number; created_at: string }>(
            'SELECT seq, created_at FROM webhook_deliveries WHERE seq > $1 ORDER BY seq LIMIT $2',
            [afterSeq, limit],
          )
        ).rows;
        const { next, done } = retentionCut(rows, cutoff, afterSeq, limit);
        const changed =
          next > afterSeq
            ? ((await t.query('DELETE FROM webhook_deliveries WHERE seq > $1 AND seq <= $2', [afterSeq, next]))
                .rowCount ?? 0)
            : 0;
        return { changed, next, done };
      }),
    findById: async (id: string) =>
      (await pool.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1`, [id])).rows[0],
    listOfProject: async (projectId: string) =>
      (
        await pool.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = $1 ORDER BY seq`, [
          projectId,
        ])
      ).rows,
    /**
     * Inserts unless the organization already has `max` webhooks; false at the ceiling. The
     * organization's row is locked while they are counted, so the ceiling holds across nodes.
     */
    create: (row: WebhookRow, max: number | null, a: Audited) =>
      tx.write(async (t) => {
        if (max !== null) {
          const org = await t.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = $1', [
            row.project_id,
          ]);
          await t.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [org.rows[0]?.organization_id]);
          const n = await t.query<{ n: number }>(
            `SELECT count(*) AS n FROM webhooks w JOIN projects p ON p.id = w.project_id
             WHERE p.organization_id = $1`,
            [org.rows[0]?.organization_id],
          );
          if (n.rows[0]!.n >= max) return false;
        }
        await t.query(
          `INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [row.id, row.project_id, row.url, row.events, row.secret, row.created_at, row.updated_at],
        );
        await log(t, a);
        return true;
      }),
    update: (row: WebhookRow, a: Audited) =>
      tx.write(async (t) => {
        await t.query(
          `UPDATE webhooks SET url = $2, events = $3, is_active = $4, auto_disabled = $5, exhausted_in_a_row = $6,
             secret = $7, updated_at = $8 WHERE id = $1`,
          [
            row.id,
            row.url,
            row.events,
            row.is_active,
            row.auto_disabled,
            row.exhausted_in_a_row,
            row.secret,
            row.updated_at,
          ],
        );
        await log(t, a);
      }),
    remove: (id: string, a: Audited) =>
      tx.write(async (t) => {
        const r = await t.query('DELETE FROM webhooks WHERE id = $1', [id]);
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await log(t, a);
        return changed;
      }),

    /**
     * Claims due outbox rows, oldest first, that no other node is claiming: each row's due
     * time moves to `now + leaseMs` (its lease), and the rows come with their webhook and
     * their body, built from the event as SQLite builds it.
     */
    claimDue: (now: string, limit: number, leaseMs: number, _skip?: Set<number>) =>
      tx.write(async (t): Promise<LeasedDueRow[]> => {
        const lease = new Date(Date.parse(now) + leaseMs).toISOString();
        const r = await t.query<DueParts & { claimed_due: string }>(
          `WITH picked AS (
             SELECT seq, next_attempt_at AS due FROM webhook_outbox WHERE next_attempt_at <= $1
             ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED),
           c AS (
             UPDATE webhook_outbox o SET next_attempt_at = $3 FROM picked WHERE o.seq = picked.seq
             RETURNING o.*, picked.due AS claimed_due)
           SELECT c.seq, c.id, c.webhook_id, c.event_id, c.event_type, c.attempts, c.claimed_due, c.created_at,
                  c.skip, w.url, w.secret, w.is_active, c.payload, c.email_status,
                  e.id AS email_id, e.from_email, e.to_emails, e.subject, e.tags, e.metadata,
                  ev.id AS ev_id, ev.type AS ev_type, ev.created_at AS ev_created_at, ev.data AS ev_data,
                  ev.ip_address, ev.user_agent
           FROM c JOIN webhooks w ON w.id = c.webhook_id
             LEFT JOIN email_events ev ON ev.seq = c.event_seq
             LEFT JOIN emails e ON e.seq = ev.email_seq
           ORDER BY c.claimed_due, c.seq`,
          [now, limit, lease],
        );
        return r.rows.map((row) => dueRowOf({ ...row, next_attempt_at: row.claimed_due }, lease));
      }),

    /**
     * Stores an attempt's record and moves the outbox row on (retry, or gone when done), if
     * this claim still holds it; an exhausted event counts toward deactivation, a success
     * resets the count. Returns whether the webhook is still active.
     */
    recordAttempt: (outboxSeq: number, lease: string, r: AttemptResult) =>
      tx.write(async (t) => {
        // A retry carries the body of its first attempt, so every attempt sends the same bytes.
        const moved = r.next
          ? await t.query(
              `UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = $2, payload = $3
               WHERE seq = $1 AND next_attempt_at = $4`,
              [outboxSeq, r.next, r.record.request_body, lease],
            )
          : await done(t, outboxSeq, lease);
        // Another node took the row after this claim's lease ran out: its attempt counts.
        if (!moved.rowCount) return true;
        await insertRecord(t, { ...r.record, next_attempt_at: r.next });
        const ended = r.record.status === 'succeeded' || r.exhausted;
        if (!ended) return true;
        const row = await t.query<{ is_active: number }>(
          `UPDATE webhooks SET exhausted_in_a_row = CASE WHEN $2 THEN exhausted_in_a_row + 1 ELSE 0 END,
             is_active = CASE WHEN $2 AND exhausted_in_a_row + 1 >= $3 THEN 0 ELSE is_active END,
             auto_disabled = CASE WHEN $2 AND exhausted_in_a_row + 1 >= $3 THEN 1 ELSE auto_disabled END
           WHERE id = $1 AND ($2 OR exhausted_in_a_row > 0) RETURNING is_active`,
          [r.record.webhook_id, r.exhausted, r.disableAfter],
        );
        // No row: a success on a webhook whose count was already 0 (nothing to write); it is active.
        return row.rows[0] === undefined ? !r.exhausted : row.rows[0].is_active === 1;
      }),
    /** An outbox row whose event is gone (its email was deleted): nothing to send. */
    drop: (outboxSeq: number, lease: string) =>
      tx.write(async (t) => {
        await done(t, outboxSeq, lease);
      }),
    /** A skipped event (the webhook was deactivated after it was queued): recorded, not sent. */
    recordSkipped: (outboxSeq: number, lease: string, record: Delivery) =>
      tx.write(async (t) => {
        if ((await done(t, outboxSeq, lease)).rowCount) await insertRecord(t, record);
      }),
    /** A manual redelivery: a new outbox row with the same event and body, due now. */
    enqueue: (row: Omit<OutboxRow, 'seq' | 'attempts'>, a: Audited) =>
      tx.write(async (t) => {
        await t.query(
          `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [row.id, row.webhook_id, row.event_id, row.event_type, row.payload, row.next_attempt_at, row.created_at],
        );
        await log(t, a);
      }),

    findDelivery: async (webhookId: string, id: string) =>
      (await pool.query<Delivery>(`${DELIVERY} WHERE id = $1 AND webhook_id = $2`, [id, webhookId])).rows[0],
    /** Records of a webhook, newest first, filtered. */
    listDeliveries: async (
      webhookId: string,
      f: { status?: string | undefined; from?: string | undefined; to?: string | undefined },
      limit: number,
      offset: number,
    ) =>
      (
        await pool.query<Delivery>(
          `${DELIVERY} WHERE webhook_id = $1 AND ($2::text IS NULL OR status = $2)
             AND ($3::text IS NULL OR created_at >= $3) AND ($4::text IS NULL OR created_at <= $4)
           ORDER BY seq DESC LIMIT $5 OFFSET $6`,
          [webhookId, f.status ?? null, f.from ?? null, f.to ?? null, limit, offset],
        )
      ).rows,
    /** When the longest-waiting due event fell due (undefined when none is due). */
    oldestDue: async (now: string) =>
      (
        await pool.query<{ m: string | null }>(
          'SELECT min(next_attempt_at) AS m FROM webhook_outbox WHERE next_attempt_at <= $1',
          [now],
        )
      ).rows[0]!.m ?? undefined,
    /** Events waiting in the outbox (for `svc top` and /metrics). */
    pendingCount: () => count('SELECT count(*) AS n FROM webhook_outbox'),
    /** Whether any webhook exists (the dispatcher starts with the first). */
    anyWebhook: async () => (await pool.query('SELECT 1 FROM webhooks LIMIT 1')).rowCount === 1,
    /** Webhooks deactivated by failures now. */
    autoDisabledCount: () => count('SELECT count(*) AS n FROM webhooks WHERE auto_disabled = 1'),
  };
}

export type PgWebhooksRepo = ReturnType<typeof createPgWebhooksRepo>;
