import type { Audited, AuditWriter } from '../audit/index.ts';
import type { Committer } from '../store/committer.ts';
import type { Db } from '../store/db.ts';
import { receivedWhere, RECEIVED_COLUMNS } from './rows.ts';
import type { EventProgress, ReceivedRow, ReceivingStore, RouteRow } from './store.ts';

const ROUTE_COLUMNS =
  'id, project_id, domain_id, domain, kind, local_part, action, webhook_id, forward_to, created_at, updated_at';

/** Routes and received messages on SQLite. */
export function createReceivingRepo(db: Db, tx: Committer, audit: AuditWriter): ReceivingStore {
  const log = (a: Audited) => audit.record(a.actor, a.entry, a.atMs);
  const q = {
    route: db.prepare<[string], RouteRow>(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE id = ?`),
    routes: db.prepare<[string], RouteRow>(
      `SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE project_id = +? ORDER BY seq`,
    ),
    routesAt: db.prepare<[string], RouteRow>(
      `SELECT ${ROUTE_COLUMNS.split(', ')
        .map((c) => `r.${c}`)
        .join(', ')} FROM inbound_routes r JOIN domains d ON d.id = r.domain_id
       WHERE r.domain = +? AND d.receiving = 1 ORDER BY r.seq`,
    ),
    received: db.prepare<[string, string], ReceivedRow>(
      `SELECT ${RECEIVED_COLUMNS} FROM received_emails WHERE id = ? AND project_id = ?`,
    ),
    raw: db.prepare<[string], Buffer>('SELECT raw_message FROM received_emails WHERE id = ?').pluck(),
    pending: db.prepare<[string], { event_id: string; attempts: number }>(
      "SELECT event_id, attempts FROM webhook_outbox WHERE event_type = 'email.received' AND event_id IN (SELECT value FROM json_each(?))",
    ),
    records: db.prepare<[string], { event_id: string; status: string; attempt: number }>(
      `SELECT event_id, status, attempt FROM webhook_deliveries
       WHERE seq IN (SELECT max(seq) FROM webhook_deliveries
                     WHERE event_type = 'email.received' AND event_id IN (SELECT value FROM json_each(?))
                     GROUP BY event_id)`,
    ),
    oldBefore: db
      .prepare<[string, number], number>(
        'SELECT seq FROM received_emails WHERE received_at < ? ORDER BY received_at, seq LIMIT ?',
      )
      .pluck(),
  };
  const w = {
    insertRoute: db.prepare(
      `INSERT INTO inbound_routes (${ROUTE_COLUMNS}) VALUES (@id, @project_id, @domain_id, @domain, @kind, @local_part,
         @action, @webhook_id, @forward_to, @created_at, @updated_at)`,
    ),
    updateRoute: db.prepare(
      `UPDATE inbound_routes SET action = @action, webhook_id = @webhook_id, forward_to = @forward_to,
         updated_at = @updated_at WHERE id = @id`,
    ),
    removeRoute: db.prepare('DELETE FROM inbound_routes WHERE id = ?'),
    receiving: db.prepare('UPDATE domains SET receiving = ? WHERE id = ?'),
    insertReceived: db.prepare(
      `INSERT INTO received_emails (${RECEIVED_COLUMNS}, raw_message) VALUES (@id, @project_id, @route_id, @action,
         @outcome, @detail, @forwarded_email_id, @mail_from, @rcpt_to, @remote_ip, @helo, @from_email, @to_emails,
         @subject, @message_id, @size, @auth, @received_at, @raw)`,
    ),
    event: db.prepare(
      `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
       VALUES (@id, @webhook_id, @event_id, @event_type, @payload, @next_attempt_at, @created_at)`,
    ),
    forward: db.prepare('UPDATE received_emails SET outcome = ?, detail = ?, forwarded_email_id = ? WHERE id = ?'),
    removeReceived: db.prepare('DELETE FROM received_emails WHERE id = ? AND project_id = ?'),
    removeEvents: db.prepare("DELETE FROM webhook_outbox WHERE event_id = ? AND event_type = 'email.received'"),
    removeSeqs: db.prepare('DELETE FROM received_emails WHERE seq IN (SELECT value FROM json_each(?))'),
  };
  const read = <T>(v: T) => Promise.resolve(v);
  return {
    createRoute: (row, a) =>
      tx.write(() => {
        w.insertRoute.run(row);
        log(a);
      }),
    updateRoute: (row, a) =>
      tx.write(() => {
        w.updateRoute.run(row);
        log(a);
      }),
    removeRoute: (id, a) =>
      tx.write(() => {
        const changed = w.removeRoute.run(id).changes > 0;
        if (changed) log(a);
        return changed;
      }),
    findRoute: (id) => read(q.route.get(id)),
    listRoutes: (projectId) => read(q.routes.all(projectId)),
    routesAt: (domain) => read(q.routesAt.all(domain)),
    setReceiving: (domainId, on, a) =>
      tx.write(() => {
        const changed = w.receiving.run(on ? 1 : 0, domainId).changes > 0;
        if (changed) log(a);
        return changed;
      }),

    receive: (row, raw, event) =>
      tx.write(() => {
        w.insertReceived.run({ ...row, raw });
        if (event) w.event.run(event);
      }),
    recordForward: (id, outcome, detail, emailId) =>
      tx.write(() => {
        w.forward.run(outcome, detail, emailId, id);
      }),
    findReceived: (projectId, id) => read(q.received.get(id, projectId)),
    rawOf: (id) => read(q.raw.get(id) ?? undefined),
    listReceived: (projectId, f, limit) => {
      const { where, params } = receivedWhere(f, (i) => `@p${i}`);
      const named = Object.fromEntries(params.map((v, i) => [`p${i}`, v]));
      const sql = `SELECT ${RECEIVED_COLUMNS} FROM received_emails WHERE project_id = @project ${where}
        ORDER BY seq DESC LIMIT @limit`;
      return read(db.prepare(sql).all({ ...named, project: projectId, limit }) as ReceivedRow[]);
    },
    deleteReceived: (projectId, id, a) =>
      tx.write(() => {
        const changed = w.removeReceived.run(id, projectId).changes > 0;
        if (changed) {
          w.removeEvents.run(id);
          log(a);
        }
        return changed;
      }),
    deleteReceivedBefore: (cutoff, limit) =>
      tx.write(() => {
        const seqs = q.oldBefore.all(cutoff, limit);
        return seqs.length ? w.removeSeqs.run(JSON.stringify(seqs)).changes : 0;
      }),
    eventProgress: (ids) => {
      const json = JSON.stringify(ids);
      return read(progressOf(q.pending.all(json), q.records.all(json)));
    },
  };
}

/** Each message's event: pending while in the outbox, else as its last record went (both stores). */
export function progressOf(
  pending: { event_id: string; attempts: number }[],
  records: { event_id: string; status: string; attempt: number }[],
): Map<string, EventProgress> {
  const out = new Map<string, EventProgress>();
  for (const r of records) {
    out.set(r.event_id, { status: r.status === 'succeeded' ? 'succeeded' : 'failed', attempts: Number(r.attempt) });
  }
  for (const p of pending) out.set(p.event_id, { status: 'pending', attempts: Number(p.attempts) });
  return out;
}
