import type { Committer } from '../store/committer.ts';
import type { Db } from '../store/db.ts';
import type { DatedRow } from './dmarc.ts';
import { reporterLimitProblem, type ReporterUsage } from './dmarc-limits.ts';
import type { DmarcStore } from './dmarc-store.ts';

type RowOut = Omit<DatedRow, 'own_source' | 'flagged'> & { own_source: number; flagged: number };

const ROWS = `SELECT r.begin_at, r.org_name, w.source_ip, w.count, w.disposition, w.dkim_result, w.dkim_domain,
                     w.spf_result, w.spf_domain, w.dkim_aligned, w.spf_aligned, w.own_source, w.flagged
              FROM dmarc_reports r JOIN dmarc_report_rows w ON w.report_id = r.id
              WHERE r.domain_id = +? AND r.begin_at >= +? ORDER BY r.begin_at, r.id, w.n`;

/** DMARC aggregate reports on SQLite: the plan of dmarc.ts executed, nothing decided here. */
export function createDmarcRepo(db: Db, tx: Committer): DmarcStore {
  const insertReport = db.prepare(
    `INSERT INTO dmarc_reports (id, domain_id, org_name, report_id, begin_at, end_at, policy, received_at,
       sender_ip, row_count)
     VALUES (@id, @domain_id, @org_name, @report_id, @begin_at, @end_at, @policy, @received_at,
       @sender_ip, @row_count)
     ON CONFLICT (org_name, report_id) DO NOTHING`,
  );
  const known = db.prepare<[string, string], { n: number }>(
    'SELECT 1 AS n FROM dmarc_reports WHERE org_name = ? AND report_id = ?',
  );
  const usage = (by: 'lower(org_name) = lower(?)' | 'sender_ip = ?') =>
    db.prepare<[string, string, string], ReporterUsage>(
      `SELECT count(*) AS reports, coalesce(sum(row_count), 0) AS rows FROM dmarc_reports
       WHERE domain_id = ? AND received_at >= ? AND ${by}`,
    );
  const byOrg = usage('lower(org_name) = lower(?)');
  const byIp = usage('sender_ip = ?');
  const insertRow = db.prepare(
    `INSERT INTO dmarc_report_rows (report_id, n, source_ip, count, disposition, dkim_result, dkim_domain,
       spf_result, spf_domain, dkim_aligned, spf_aligned, own_source, flagged)
     VALUES (@report_id, @n, @source_ip, @count, @disposition, @dkim_result, @dkim_domain,
       @spf_result, @spf_domain, @dkim_aligned, @spf_aligned, @own_source, @flagged)`,
  );
  const sign = db.prepare(
    `UPDATE emails SET dkim_signing_status = ?
     WHERE dkim_signing_status = 'expected' AND dkim_d = ? AND sent_at >= ? AND sent_at <= ?`,
  );
  const rows = db.prepare<[string, string], RowOut>(ROWS);
  return {
    recordReport: (plan) =>
      tx.write(() => {
        const p = plan.report;
        // A report sent again is answered as recorded before any limit: reporters resend after timeouts.
        if (known.get(p.org_name, p.report_id)) return { recorded: false, emails: 0 };
        const { org_name, sender_ip, since } = plan.reporter;
        const limited = reporterLimitProblem(plan.reporter, {
          org: byOrg.get(p.domain_id, since, org_name)!,
          ip: sender_ip === null ? null : byIp.get(p.domain_id, since, sender_ip)!,
        });
        if (limited) return { recorded: false, emails: 0, limited };
        if (insertReport.run(p).changes === 0) return { recorded: false, emails: 0 };
        plan.rows.forEach((r, n) =>
          insertRow.run({
            ...r,
            report_id: plan.report.id,
            n,
            own_source: r.own_source ? 1 : 0,
            flagged: r.flagged ? 1 : 0,
          }),
        );
        const s = plan.signing;
        const emails = s ? sign.run(s.status, s.domain, s.from, s.to).changes : 0;
        return { recorded: true, emails };
      }),
    listRows: (domainId, since) =>
      Promise.resolve(
        rows.all(domainId, since).map((r) => ({ ...r, own_source: r.own_source === 1, flagged: r.flagged === 1 })),
      ),
  };
}
