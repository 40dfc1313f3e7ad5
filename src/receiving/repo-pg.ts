import type { Audited, PgAuditWriter } from '../audit/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
import { progressOf } from './repo.ts';
import { receivedWhere, RECEIVED_COLUMNS } from './rows.ts';
import type { ReceivedRow, ReceivingStore, RouteRow } from './store.ts';

const ROUTE_COLUMNS =
  'id, project_id, domain_id, domain, kind, local_part, action, webhook_id, forward_to, created_at, updated_at';
const ROUTE_VALUES = ROUTE_COLUMNS.split(', ').map((_, i) => `$${i + 1}`);
const routeParams = (r: RouteRow) => ROUTE_COLUMNS.split(', ').map((c) => r[c as keyof RouteRow]);
const RECEIVED_LIST = RECEIVED_COLUMNS.split(', ');

/** A received row as PostgreSQL returns it: its BIGINT size as a number, as on SQLite. */
const receivedOf = (r: ReceivedRow): ReceivedRow => ({ ...r, size: Number(r.size) });

/** Routes and received messages on PostgreSQL, as repo.ts on SQLite. */
export function createPgReceivingRepo(pool: PgPool, tx: PgCommitter, audit: PgAuditWriter): ReceivingStore {
  const log = (t: PgTx, a: Audited) => audit.record(t, a.actor, a.entry, a.atMs);
  return {
    createRoute: (row, a) =>
      tx.write(async (t) => {
        await t.query(
          `INSERT INTO inbound_routes (${ROUTE_COLUMNS}) VALUES (${ROUTE_VALUES.join(', ')})`,
          routeParams(row),
        );
        await log(t, a);
      }),
    updateRoute: (row, a) =>
      tx.write(async (t) => {
        await t.query(
          'UPDATE inbound_routes SET action = $2, webhook_id = $3, forward_to = $4, updated_at = $5 WHERE id = $1',
          [row.id, row.action, row.webhook_id, row.forward_to, row.updated_at],
        );
        await log(t, a);
      }),
    removeRoute: (id, a) =>
      tx.write(async (t) => {
        const changed = ((await t.query('DELETE FROM inbound_routes WHERE id = $1', [id])).rowCount ?? 0) > 0;
        if (changed) await log(t, a);
        return changed;
      }),
    findRoute: async (id) =>
      (await pool.query<RouteRow>(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE id = $1`, [id])).rows[0],
    listRoutes: async (projectId) =>
      (
        await pool.query<RouteRow>(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE project_id = $1 ORDER BY seq`, [
          projectId,
        ])
      ).rows,
    routesAt: async (domain) =>
      (
        await pool.query<RouteRow>(
          `SELECT ${ROUTE_COLUMNS.split(', ')
            .map((c) => `r.${c}`)
            .join(', ')} FROM inbound_routes r JOIN domains d ON d.id = r.domain_id
           WHERE r.domain = $1 AND d.receiving = 1 ORDER BY r.seq`,
          [domain],
        )
      ).rows,
    setReceiving: (domainId, on, a) =>
      tx.write(async (t) => {
        const r = await t.query('UPDATE domains SET receiving = $1 WHERE id = $2', [on ? 1 : 0, domainId]);
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) await log(t, a);
        return changed;
      }),

    receive: (row, raw, event) =>
      tx.write(async (t) => {
        const values = [...RECEIVED_LIST.map((c) => row[c as keyof ReceivedRow]), raw];
        await t.query(
          `INSERT INTO received_emails (${RECEIVED_COLUMNS}, raw_message) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
          values,
        );
        if (event)
          await t.query(
            `INSERT INTO webhook_outbox (id, webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)`,
            [
              event.id,
              event.webhook_id,
              event.event_id,
              event.event_type,
              event.payload,
              event.next_attempt_at,
              event.created_at,
            ],
          );
      }),
    recordForward: (id, outcome, detail, emailId) =>
      tx.write(async (t) => {
        await t.query('UPDATE received_emails SET outcome = $1, detail = $2, forwarded_email_id = $3 WHERE id = $4', [
          outcome,
          detail,
          emailId,
          id,
        ]);
      }),
    findReceived: async (projectId, id) => {
      const r = await pool.query<ReceivedRow>(
        `SELECT ${RECEIVED_COLUMNS} FROM received_emails WHERE id = $1 AND project_id = $2`,
        [id, projectId],
      );
      return r.rows[0] && receivedOf(r.rows[0]);
    },
    rawOf: async (id) =>
      (await pool.query<{ raw_message: Buffer }>('SELECT raw_message FROM received_emails WHERE id = $1', [id])).rows[0]
        ?.raw_message,
    listReceived: async (projectId, f, limit) => {
      const { where, params } = receivedWhere(f, (i) => `$${i + 3}`);
      const r = await pool.query<ReceivedRow>(
        `SELECT ${RECEIVED_COLUMNS} FROM received_emails WHERE project_id = $1 ${where} ORDER BY seq DESC LIMIT $2`,
        [projectId, limit, ...params],
      );
      return r.rows.map(receivedOf);
    },
    deleteReceived: (projectId, id, a) =>
      tx.write(async (t) => {
        const r = await t.query('DELETE FROM received_emails WHERE id = $1 AND project_id = $2', [id, projectId]);
        const changed = (r.rowCount ?? 0) > 0;
        if (changed) {
          await t.query("DELETE FROM webhook_outbox WHERE event_id = $1 AND event_type = 'email.received'", [id]);
          await log(t, a);
        }
        return changed;
      }),
    deleteReceivedBefore: (cutoff, limit) =>
      tx.write(async (t) => {
        const r = await t.query(
          `DELETE FROM received_emails WHERE seq IN
             (SELECT seq FROM received_emails WHERE received_at < $1 ORDER BY received_at, seq LIMIT $2)`,
          [cutoff, limit],
        );
        return r.rowCount ?? 0;
      }),
    eventProgress: async (ids) => {
      const pending = await pool.query<{ event_id: string; attempts: number }>(
        "SELECT event_id, attempts FROM webhook_outbox WHERE event_type = 'email.received' AND event_id = ANY($1)",
        [ids],
      );
      const records = await pool.query<{ event_id: string; status: string; attempt: number }>(
        `SELECT DISTINCT ON (event_id) event_id, status, attempt FROM webhook_deliveries
         WHERE event_type = 'email.received' AND event_id = ANY($1) ORDER BY event_id, seq DESC`,
        [ids],
      );
      return progressOf(pending.rows, records.rows);
    },
  };
}
