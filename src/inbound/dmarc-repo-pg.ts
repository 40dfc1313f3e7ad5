import type { PgPool } from '../store/pg.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import type { DatedRow } from './dmarc.ts';
import { reporterLimitProblem } from './dmarc-limits.ts';
import type { DmarcStore } from './dmarc-store.ts';

type RowOut = Omit<DatedRow, 'own_source' | 'flagged' | 'count'> & {
  own_source: number;
  flagged: number;
  count: number | string;
};

/** DMARC aggregate reports on PostgreSQL: the plan of dmarc.ts executed as dmarc-repo.ts does on SQLite. */
export function createPgDmarcRepo(pool: PgPool, tx: PgCommitter): DmarcStore {
  return {
    recordReport: (plan) =>
      tx.write(async (t) => {
        const p = plan.report;
        // One report of a domain at a time, across nodes: the day's count and the insert go together.
        await t.query('SELECT 1 FROM domains WHERE id = $1 FOR UPDATE', [p.domain_id]);
        // A report sent again is answered as recorded before any limit: reporters resend after timeouts.
        const known = await t.query('SELECT 1 FROM dmarc_reports WHERE org_name = $1 AND report_id = $2', [
          p.org_name,
          p.report_id,
        ]);
        if ((known.rowCount ?? 0) > 0) return { recorded: false, emails: 0 };
        const { org_name, sender_ip, since } = plan.reporter;
        const usage = async (by: string, value: string) => {
          const r = await t.query<{ reports: string; rows: string }>(
            `SELECT count(*) AS reports, coalesce(sum(row_count), 0) AS rows FROM dmarc_reports
             WHERE domain_id = $1 AND received_at >= $2 AND ${by}`,
            [p.domain_id, since, value],
          );
          return { reports: Number(r.rows[0]!.reports), rows: Number(r.rows[0]!.rows) };
        };
        const limited = reporterLimitProblem(plan.reporter, {
          org: await usage('lower(org_name) = lower($3)', org_name),
          ip: sender_ip === null ? null : await usage('sender_ip = $3', sender_ip),
        });
        if (limited) return { recorded: false, emails: 0, limited };
        const inserted = await t.query(
          `INSERT INTO dmarc_reports (id, domain_id, org_name, report_id, begin_at, end_at, policy, received_at,
             sender_ip, row_count)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (org_name, report_id) DO NOTHING`,
          [
            p.id,
            p.domain_id,
            p.org_name,
            p.report_id,
            p.begin_at,
            p.end_at,
            p.policy,
            p.received_at,
            p.sender_ip,
            p.row_count,
          ],
        );
        if ((inserted.rowCount ?? 0) === 0) return { recorded: false, emails: 0 };
        const col = <K extends keyof (typeof plan.rows)[number]>(k: K) => plan.rows.map((r) => r[k]);
        const flag = (k: 'own_source' | 'flagged') => plan.rows.map((r) => (r[k] ? 1 : 0));
        // One statement for all the rows: a report may hold thousands.
        await t.query(
          `INSERT INTO dmarc_report_rows (report_id, n, source_ip, count, disposition, dkim_result, dkim_domain,
             spf_result, spf_domain, dkim_aligned, spf_aligned, own_source, flagged)
           SELECT $1, x.n - 1, x.ip, x.c, x.d, x.dr, x.dd, x.sr, x.sd, x.da, x.sa, x.o, x.f
           FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                       $9::text[], $10::text[], $11::int[], $12::int[])
                WITH ORDINALITY AS x(ip, c, d, dr, dd, sr, sd, da, sa, o, f, n)`,
          [
            p.id,
            col('source_ip'),
            col('count'),
            col('disposition'),
            col('dkim_result'),
            col('dkim_domain'),
            col('spf_result'),
            col('spf_domain'),
            col('dkim_aligned'),
            col('spf_aligned'),
            flag('own_source'),
            flag('flagged'),
          ],
        );
        const s = plan.signing;
        if (!s) return { recorded: true, emails: 0 };
        const signed = await t.query(
          `UPDATE emails SET dkim_signing_status = $1
           WHERE dkim_signing_status = 'expected' AND dkim_d = $2 AND sent_at >= $3 AND sent_at <= $4`,
          [s.status, s.domain, s.from, s.to],
        );
        return { recorded: true, emails: signed.rowCount ?? 0 };
      }),
    async listRows(domainId, since) {
      const r = await pool.query<RowOut>(
        `SELECT r.begin_at, r.org_name, w.source_ip, w.count, w.disposition, w.dkim_result, w.dkim_domain,
                w.spf_result, w.spf_domain, w.dkim_aligned, w.spf_aligned, w.own_source, w.flagged
         FROM dmarc_reports r JOIN dmarc_report_rows w ON w.report_id = r.id
         WHERE r.domain_id = $1 AND r.begin_at >= $2 ORDER BY r.begin_at, r.id, w.n`,
        [domainId, since],
      );
      return r.rows.map((x) => ({
        ...x,
        count: Number(x.count),
        own_source: x.own_source === 1,
        flagged: x.flagged === 1,
      }));
    },
  };
}
