import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import { dueRowOf, type DueParts } from './payload.ts';
import type { AttemptResult, DeliveryRow, LeasedDueRow, OutboxRow, WebhookRow, WebhooksStore } from './store.ts';

export type { AttemptResult, DueRow, LeasedDueRow, OutboxRow, WebhookRow } from './store.ts';

/** SQL of webhooks, their outbox and their delivery records. */
export function createWebhooksRepo(db: Db, tx: Committer, audit: AuditWriter): WebhooksStore {
  const log = (a: Audited | undefined) => a && audit.record(a.actor, a.entry, a.atMs);
  const q = {
    byId: db.prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE id = ?'),
    ofProject: db.prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE project_id = +? ORDER BY rowid'),
    count: db.prepare<[string], { n: number }>(
      `SELECT count(*) AS n FROM webhooks w JOIN projects p ON p.id = w.project_id
       WHERE p.organization_id = (SELECT organization_id FROM projects WHERE id = ?)`,
    ),
    // Seqs alone come from the index; rows in flight are skipped before their bodies are read.
    dueSeqs: db
      .prepare<[string, number], number>(
        'SELECT seq FROM webhook_outbox WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT +?',
      )
      .pluck(),
    // The rows taken and their webhooks in one statement (a webhook deleted meanwhile took its rows
    // with it), with what the body of a row queued by the trigger is built from (payload.ts), off
    // the accept's thread: the event row, the email's fields that never change after accept, and
    // the status stored with the row (migration 0012).
    bySeqs: db.prepare<[string], DueParts>(
      `SELECT o.seq, o.id, o.webhook_id, o.event_id, o.event_type, o.attempts, o.next_attempt_at, o.created_at,
         o.skip, w.url, w.secret, w.is_active, o.payload, o.email_status,
         e.id AS email_id, e.from_email, e.to_emails, e.subject, e.tags, e.metadata,
         ev.id AS ev_id, ev.type AS ev_type, ev.created_at AS ev_created_at, ev.data AS ev_data,
         ev.ip_address, ev.user_agent
       FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
         LEFT JOIN email_events ev ON ev.seq = o.event_seq
         LEFT JOIN emails e ON e.seq = ev.email_seq
       WHERE o.seq IN (SELECT value FROM json_each(?)) ORDER BY o.next_attempt_at`,
    ),
    delivery: db.prepare<[string, string], DeliveryRow>(
      `SELECT id, webhook_id, event_id, event_type, attempt, status, http_status, duration_ms, error, request_body,
         response_body, created_at, next_attempt_at FROM webhook_deliveries WHERE id = ? AND webhook_id = ?`,
    ),
    pendingCount: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM webhook_outbox'),
    oldestDue: db
      .prepare<[string], string | null>('SELECT min(next_attempt_at) FROM webhook_outbox WHERE next_attempt_at <= ?')
      .pluck(),
    autoDisabled: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM webhooks WHERE auto_disabled = 1'),
    any: db.prepare<[], number>('SELECT EXISTS (SELECT 1 FROM webhooks)').pluck(),
  };
  const w = {
    insert: db.prepare(
      `INSERT INTO webhooks (id, project_id, url, events, secret, created_at, updated_at)
       VALUES (@id, @project_id, @url, @events, @secret, @created_at, @updated_at)`,
    ),
    update: db.prepare(
      `UPDATE webhooks SET url = @url, events = @events, is_active = @is_active, auto_disabled = @auto_disabled,
         exhausted_in_a_row = @exhausted_in_a_row, secret = @secret, updated_at = @updated_at WHERE id = @id`,
    ),
    remove: db.prepare('DELETE FROM webhooks WHERE id = ?'),
    record: db.prepare(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, attempt, status, http_status, duration_ms,
         error, request_body, response_body, created_at, next_attempt_at)
       VALUES (@id, @webhook_id, @event_id, @event_type, @attempt, @status, @http_status, @duration_ms, @error,
         @request_body, @response_body, @created_at, @next_attempt_at)`,
    ),
    // A retry carries the body of its first attempt, so every attempt sends the same bytes.
    retry: db.prepare(
      'UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ?, payload = ? WHERE seq = ?',
    ),
    done: db.prepare('DELETE FROM webhook_outbox WHERE seq = ?'),
    streak: db.prepare(
      `UPDATE webhooks SET exhausted_in_a_row = CASE WHEN @exhausted THEN exhausted_in_a_row + 1 ELSE 0 END,
         is_active = CASE WHEN @exhausted AND exhausted_in_a_row + 1 >= @limit THEN 0 ELSE is_active END,
         auto_disabled = CASE WHEN @exhausted AND exhausted_in_a_row + 1 >= @limit THEN 1 ELSE auto_disabled END
       WHERE id = @id AND (@exhausted OR exhausted_in_a_row > 0) RETURNING is_active`,
    ),
    enqueue: db.prepare(
      `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
       VALUES (@id, @webhook_id, @event_id, @event_type, @payload, @next_attempt_at, @created_at)`,
    ),
  };
  const read = <T>(v: T) => Promise.resolve(v);

  const deliveriesPage = db.prepare<[number, number], { seq: number; created_at: string }>(
    'SELECT seq, created_at FROM webhook_deliveries WHERE seq > +? ORDER BY seq LIMIT +?',
  );
  const deleteDeliveries = db.prepare('DELETE FROM webhook_deliveries WHERE seq > ? AND seq <= ?');
  return {
    /**
     * One batch of retention (`--email-retention`): the attempt records written before
     * `cutoff`, in seq order from after `afterSeq` (they are written in time order).
     */
    deleteDeliveriesBefore: (cutoff: string, afterSeq: number, limit: number) =>
      tx.write(() => {
        const cut = retentionCut(deliveriesPage.all(afterSeq, limit), cutoff, afterSeq, limit);
        const changed = cut.next > afterSeq ? deleteDeliveries.run(afterSeq, cut.next).changes : 0;
        return { changed, next: cut.next, done: cut.done };
      }),
    findById: (id: string) => read(q.byId.get(id)),
    listOfProject: (projectId: string) => read(q.ofProject.all(projectId)),
    /**
     * Inserts unless the organization already has `max` webhooks (counted inside the
     * write, so the ceiling holds under concurrent creates); false at the ceiling.
     */
    create: (row: WebhookRow, max: number | null, a: Audited) =>
      tx.write(() => {
        if (max !== null && q.count.get(row.project_id)!.n >= max) return false;
        w.insert.run(row);
        log(a);
        return true;
      }),
    update: (row: WebhookRow, a: Audited) =>
      tx.write(() => {
        w.update.run(row);
        log(a);
      }),
    remove: (id: string, a: Audited) =>
      tx.write(() => {
        const changed = w.remove.run(id).changes > 0;
        if (changed) log(a);
        return changed;
      }),

    /**
     * Due outbox rows, oldest first. One dispatcher runs per data dir (in `svc serve`),
     * so it keeps the rows in flight in memory and skips them here: claiming writes
     * nothing, and a crash leaves nothing to release. On PostgreSQL, where several nodes
     * claim, a claim leases its rows instead (repo-pg.ts); here the lease is empty.
     */
    claimDue: (
      now: string,
      limit: number,
      _leaseMs: number,
      skip: Set<number> = new Set(),
    ): Promise<LeasedDueRow[]> => {
      const seqs = q.dueSeqs.all(now, limit + skip.size).filter((seq) => !skip.has(seq));
      const rows = seqs.length === 0 ? [] : q.bySeqs.all(JSON.stringify(seqs.slice(0, limit)));
      return read(rows.map((r) => dueRowOf(r, '')));
    },

    /**
     * Stores an attempt's record and moves the outbox row on (retry, or gone when done);
     * an exhausted event counts toward deactivation, a success resets the count. Returns
     * whether the webhook is still active.
     */
    recordAttempt: (outboxSeq: number, _lease: string, r: AttemptResult) =>
      tx.write(() => {
        w.record.run({ ...r.record, next_attempt_at: r.next });
        if (r.next) w.retry.run(r.next, r.record.request_body, outboxSeq);
        else w.done.run(outboxSeq);
        const ended = r.record.status === 'succeeded' || r.exhausted;
        if (!ended) return true;
        const row = w.streak.get({ id: r.record.webhook_id, exhausted: r.exhausted ? 1 : 0, limit: r.disableAfter }) as
          { is_active: number } | undefined;
        // No row: a success on a webhook whose count was already 0 (nothing to write); it is active.
        return row === undefined ? !r.exhausted : row.is_active === 1;
      }),
    /** An outbox row whose event is gone (its email was deleted): nothing to send. */
    drop: (outboxSeq: number, _lease: string) =>
      tx.write(() => {
        w.done.run(outboxSeq);
      }),
    /** A skipped event (the webhook was deactivated after it was queued): recorded, not sent. */
    recordSkipped: (outboxSeq: number, _lease: string, record: DeliveryRow) =>
      tx.write(() => {
        w.record.run(record);
        w.done.run(outboxSeq);
      }),
    /** A manual redelivery: a new outbox row with the same event and body, due now. */
    enqueue: (row: Omit<OutboxRow, 'seq' | 'attempts'>, a: Audited) =>
      tx.write(() => {
        w.enqueue.run(row);
        log(a);
      }),

    findDelivery: (webhookId: string, id: string) => read(q.delivery.get(id, webhookId)),
    /** Records of a webhook, newest first, filtered. */
    listDeliveries: (
      webhookId: string,
      f: { status?: string | undefined; from?: string | undefined; to?: string | undefined },
      limit: number,
      offset: number,
    ) => {
      const where = ['webhook_id = @webhook_id'];
      if (f.status) where.push('status = @status');
      if (f.from) where.push('created_at >= @from');
      if (f.to) where.push('created_at <= @to');
      const sql = `SELECT id, webhook_id, event_id, event_type, attempt, status, http_status, duration_ms, error,
          request_body, response_body, created_at, next_attempt_at
        FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit OFFSET @offset`;
      return read(db.prepare(sql).all({ webhook_id: webhookId, ...f, limit, offset }) as DeliveryRow[]);
    },
    /** When the longest-waiting due event fell due (undefined when none is due). */
    oldestDue: (now: string) => read(q.oldestDue.get(now) ?? undefined),
    /** Events waiting in the outbox (for `svc top` and /metrics). */
    pendingCount: () => read(q.pendingCount.get()!.n),
    /** Whether any webhook exists (the dispatcher thread starts with the first). */
    anyWebhook: () => read(q.any.get() === 1),
    /** Webhooks deactivated by failures now. */
    autoDisabledCount: () => read(q.autoDisabled.get()!.n),
  };
}

/**
 * Where a retention batch of attempt records ends (both stores): `rows` are the `limit`
 * records after `afterSeq`, in seq order, which is time order. The ones before `cutoff` go,
 * up to `next`; `done` once a newer one is reached or there are no more.
 */
export function retentionCut(
  rows: { seq: number; created_at: string }[],
  cutoff: string,
  afterSeq: number,
  limit: number,
): { next: number; done: boolean } {
  const newer = rows.findIndex((r) => r.created_at >= cutoff);
  const upTo = newer === -1 ? rows.length : newer;
  return { next: upTo ? rows[upTo - 1]!.seq : afterSeq, done: newer !== -1 || rows.length < limit };
}
