import type { Committer } from '../store/committer.ts';
import type { Db } from '../store/db.ts';
import { COUNT_COLUMNS, countOf, countParams, reportOf, type StoredCount, type StoredReport } from './rows.ts';
import { claimPlan, FINAL_STATUSES } from './schedule.ts';
import type { TlsrptStore } from './store.ts';

const KEY = COUNT_COLUMNS.join(', ');
const FINAL = FINAL_STATUSES.map((s) => `'${s}'`).join(', ');

/** TLS reporting on SQLite: counts added up, reports claimed and finished as schedule.ts decides. */
export function createTlsrptRepo(db: Db, tx: Committer): TlsrptStore {
  const add = db.prepare(
    `INSERT INTO tls_report_counts (${KEY}, count) VALUES (${COUNT_COLUMNS.map(() => '?').join(', ')}, ?)
     ON CONFLICT (${KEY}) DO UPDATE SET count = count + excluded.count`,
  );
  const counts = db.prepare<[string, string], StoredCount>(
    `SELECT ${KEY}, count FROM tls_report_counts WHERE day = ? AND policy_domain = ? ORDER BY ${KEY}`,
  );
  const open = db.prepare<[string], { policy_domain: string }>(
    `SELECT DISTINCT c.policy_domain FROM tls_report_counts c
     LEFT JOIN tls_reports r ON r.day = c.day AND r.policy_domain = c.policy_domain
     WHERE c.day = ? AND (r.status IS NULL OR r.status NOT IN (${FINAL})) ORDER BY c.policy_domain`,
  );
  const one = db.prepare<[string, string], StoredReport>(
    'SELECT * FROM tls_reports WHERE day = ? AND policy_domain = ?',
  );
  const claim = db.prepare(
    `INSERT INTO tls_reports (day, policy_domain, report_id, status, attempts, lease_until, next_attempt_at,
       destinations, detail, updated_at)
     VALUES (@day, @policy_domain, @report_id, 'sending', @attempts, @lease_until, NULL, @destinations, NULL, @now)
     ON CONFLICT (day, policy_domain) DO UPDATE SET status = 'sending', attempts = excluded.attempts,
       lease_until = excluded.lease_until, next_attempt_at = NULL, updated_at = excluded.updated_at`,
  );
  const finish = db.prepare(
    `UPDATE tls_reports SET status = @status, next_attempt_at = @next_attempt_at, lease_until = NULL,
       destinations = @destinations, detail = @detail, updated_at = @now WHERE day = @day AND policy_domain = @policy_domain`,
  );
  const reports = db.prepare<[string], StoredReport>(
    'SELECT * FROM tls_reports WHERE day >= ? ORDER BY day DESC, policy_domain',
  );
  return {
    addCounts: (rows) => tx.write(() => rows.forEach((r) => add.run(...countParams(r)))),
    listCounts: (day, domain) => Promise.resolve(counts.all(day, domain).map(countOf)),
    listOpenDomains: (day) => Promise.resolve(open.all(day).map((r) => r.policy_domain)),
    claimReport: (day, policy_domain, now, newReportId) =>
      tx.write(() => {
        const row = one.get(day, policy_domain);
        const plan = claimPlan(row && reportOf(row), now, newReportId);
        if (!plan) return undefined;
        const destinations = JSON.stringify(plan.destinations);
        claim.run({ ...plan, day, policy_domain, destinations, now: new Date(now).toISOString() });
        return { ...plan, day, policy_domain };
      }),
    finishReport: (day, policy_domain, o, now) =>
      tx.write(() => {
        finish.run({ ...o, destinations: JSON.stringify(o.destinations), day, policy_domain, now });
      }),
    listReports: (since) => Promise.resolve(reports.all(since).map(reportOf)),
  };
}
