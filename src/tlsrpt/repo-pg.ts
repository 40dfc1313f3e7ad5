import type { PgPool } from '../store/pg.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import { COUNT_COLUMNS, countOf, countParams, reportOf, type StoredCount, type StoredReport } from './rows.ts';
import { claimPlan, FINAL_STATUSES } from './schedule.ts';
import type { TlsrptStore } from './store.ts';

const KEY = COUNT_COLUMNS.join(', ');
// Byte order, as SQLite orders text, whatever the database's collation.
const KEY_ORDER = COUNT_COLUMNS.map((c) => `${c} COLLATE "C"`).join(', ');

/** TLS reporting on PostgreSQL: as repo.ts on SQLite; a claim locks the report's row, so one node wins. */
export function createPgTlsrptRepo(pool: PgPool, tx: PgCommitter): TlsrptStore {
  const placeholders = [...COUNT_COLUMNS, 'count'].map((_, i) => `$${i + 1}`).join(', ');
  return {
    addCounts: (rows) =>
      tx.write(async (t) => {
        for (const r of rows)
          await t.query(
            `INSERT INTO tls_report_counts (${KEY}, count) VALUES (${placeholders})
             ON CONFLICT (${KEY}) DO UPDATE SET count = tls_report_counts.count + excluded.count`,
            countParams(r),
          );
      }),
    listCounts: async (day, domain) =>
      (
        await pool.query<StoredCount>(
          `SELECT ${KEY}, count FROM tls_report_counts WHERE day = $1 AND policy_domain = $2 ORDER BY ${KEY_ORDER}`,
          [day, domain],
        )
      ).rows.map(countOf),
    listOpenDomains: async (day) =>
      (
        await pool.query<{ policy_domain: string }>(
          `SELECT DISTINCT c.policy_domain COLLATE "C" AS policy_domain FROM tls_report_counts c
           LEFT JOIN tls_reports r ON r.day = c.day AND r.policy_domain = c.policy_domain
           WHERE c.day = $1 AND (r.status IS NULL OR NOT (r.status = ANY($2))) ORDER BY 1`,
          [day, FINAL_STATUSES],
        )
      ).rows.map((r) => r.policy_domain),
    claimReport: (day, policy_domain, now, newReportId) =>
      tx.write(async (t) => {
        const found = await t.query<StoredReport>(
          'SELECT * FROM tls_reports WHERE day = $1 AND policy_domain = $2 FOR UPDATE',
          [day, policy_domain],
        );
        const row = found.rows[0];
        const plan = claimPlan(row && reportOf(row), now, newReportId);
        if (!plan) return undefined;
        const at = new Date(now).toISOString();
        if (row) {
          await t.query(
            `UPDATE tls_reports SET status = 'sending', attempts = $3, lease_until = $4, next_attempt_at = NULL,
               updated_at = $5 WHERE day = $1 AND policy_domain = $2`,
            [day, policy_domain, plan.attempts, plan.lease_until, at],
          );
          return { ...plan, day, policy_domain };
        }
        // Another node may claim the same new report at once: the first insert wins, the other gets none.
        const inserted = await t.query(
          `INSERT INTO tls_reports (day, policy_domain, report_id, status, attempts, lease_until, next_attempt_at,
             destinations, detail, updated_at)
           VALUES ($1, $2, $3, 'sending', $4, $5, NULL, $6, NULL, $7) ON CONFLICT (day, policy_domain) DO NOTHING`,
          [day, policy_domain, plan.report_id, plan.attempts, plan.lease_until, JSON.stringify(plan.destinations), at],
        );
        return (inserted.rowCount ?? 0) > 0 ? { ...plan, day, policy_domain } : undefined;
      }),
    finishReport: (day, policy_domain, o, now) =>
      tx.write(async (t) => {
        await t.query(
          `UPDATE tls_reports SET status = $3, next_attempt_at = $4, lease_until = NULL, destinations = $5,
             detail = $6, updated_at = $7 WHERE day = $1 AND policy_domain = $2`,
          [day, policy_domain, o.status, o.next_attempt_at, JSON.stringify(o.destinations), o.detail, now],
        );
      }),
    listReports: async (since) =>
      (
        await pool.query<StoredReport>(
          'SELECT * FROM tls_reports WHERE day >= $1 ORDER BY day DESC, policy_domain COLLATE "C"',
          [since],
        )
      ).rows.map(reportOf),
  };
}
