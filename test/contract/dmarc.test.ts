// The DMARC report store (src/inbound/dmarc-store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportPlan, StoredRow } from '../../src/inbound/dmarc.ts';
import { newEmail } from '../postgres/email-fixture.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const DAY = '2026-11-25';

const row = (source_ip: string, over: Partial<StoredRow> = {}): StoredRow => ({
  source_ip,
  count: 3,
  disposition: 'none',
  dkim_result: 'pass',
  dkim_domain: 'example.test',
  spf_result: 'pass',
  spf_domain: 'bounces.example.test',
  dkim_aligned: 'pass',
  spf_aligned: 'fail',
  own_source: true,
  flagged: false,
  ...over,
});

/** A report about domain d1 from `org`, covering DAY, as planReport (dmarc.ts) makes it. */
const plan = (reportId: string, over: { org?: string; rows?: StoredRow[]; begin?: string } = {}): ReportPlan => {
  const org = over.org ?? 'google.com';
  const rows = over.rows ?? [row('192.0.2.1')];
  return {
    report: {
      id: `r-${reportId}`,
      domain_id: 'd1',
      org_name: org,
      report_id: reportId,
      begin_at: over.begin ?? `${DAY}T00:00:00.000Z`,
      end_at: `${DAY}T23:59:59.999Z`,
      policy: 'none',
      received_at: AT,
      sender_ip: '198.51.100.7',
      row_count: rows.length,
    },
    reporter: {
      org_name: org,
      sender_ip: '198.51.100.7',
      domain: 'example.test',
      rows: rows.length,
      since: `${AT.slice(0, 10)}T00:00:00.000Z`,
    },
    rows,
    signing: { status: 'confirmed', domain: 'example.test', from: `${DAY}T00:00:00.000Z`, to: `${DAY}T23:59:59.999Z` },
  };
};

describe.each(STORE_KINDS)('DmarcStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(`INSERT INTO domains (id, organization_id, name, dkim_selector, dkim_private_key, dkim_public_key, created_at)
      VALUES ('d1', 'o1', 'example.test', 's1', 'priv', 'pub', '${AT}')`);
    for (const id of ['e1', 'e2', 'e3']) {
      await s.store.emails.acceptEmail(newEmail(id, { to: ['a@x.test'] }), [{ address: 'a@x.test', kind: 'to' }], {
        suppress: false,
        volume: null,
        idempotency: null,
      });
    }
    // e1 was sent in the report's day, e2 the day after; e3 was signed by another domain.
    await s.exec(`UPDATE emails SET dkim_signing_status = 'expected', dkim_d = 'example.test',
      sent_at = '${DAY}T10:00:00.000Z' WHERE id IN ('e1', 'e3');
      UPDATE emails SET dkim_signing_status = 'expected', dkim_d = 'example.test',
      sent_at = '2026-11-26T10:00:00.000Z' WHERE id = 'e2';
      UPDATE emails SET dkim_d = 'other.test' WHERE id = 'e3'`);
  });
  afterAll(() => s?.close());

  const signing = async () =>
    (
      await s.query<{ id: string; dkim_signing_status: string }>(
        'SELECT id, dkim_signing_status FROM emails ORDER BY id',
      )
    ).map((r) => `${r.id}:${r.dkim_signing_status}`);

  it("recordReport: the report and its rows in one write, and the emails it covers move to the plan's status", async () => {
    const rows = [row('192.0.2.1'), row('203.0.113.9', { own_source: false, flagged: true, dkim_aligned: 'fail' })];
    expect(await s.store.dmarc.recordReport(plan('rep-1', { rows }))).toEqual({ recorded: true, emails: 1 });
    expect(await signing()).toEqual(['e1:confirmed', 'e2:expected', 'e3:expected']);
    expect(await s.query('SELECT org_name, report_id, row_count FROM dmarc_reports')).toEqual([
      { org_name: 'google.com', report_id: 'rep-1', row_count: 2 },
    ]);
  });

  it('recordReport: a report recorded before (same org_name and report_id) changes nothing', async () => {
    expect(await s.store.dmarc.recordReport(plan('rep-1', { rows: [row('192.0.2.50')] }))).toEqual({
      recorded: false,
      emails: 0,
    });
    expect(await s.query("SELECT source_ip FROM dmarc_report_rows WHERE source_ip = '192.0.2.50'")).toEqual([]);
  });

  it("listRows: the domain's rows from `since` on, in report and row order, with their day and reporter", async () => {
    await s.store.dmarc.recordReport(plan('rep-0', { org: 'Yahoo', begin: '2026-11-24T00:00:00.000Z' }));
    const all = await s.store.dmarc.listRows('d1', '2026-11-24T00:00:00.000Z');
    expect(all.map((r) => [r.begin_at.slice(0, 10), r.org_name, r.source_ip, r.own_source, r.flagged])).toEqual([
      ['2026-11-24', 'Yahoo', '192.0.2.1', true, false],
      [DAY, 'google.com', '192.0.2.1', true, false],
      [DAY, 'google.com', '203.0.113.9', false, true],
    ]);
    expect(all[2]).toMatchObject({ count: 3, disposition: 'none', dkim_aligned: 'fail', spf_aligned: 'fail' });
    expect((await s.store.dmarc.listRows('d1', `${DAY}T00:00:00.000Z`)).length).toBe(2);
    expect(await s.store.dmarc.listRows('other', '2026-01-01T00:00:00.000Z')).toEqual([]);
  });

  it("recordReport: past a reporter's daily limit, says which and writes nothing", async () => {
    // Two stored today from 198.51.100.7 (google.com and Yahoo); 48 more reach the 50 a day one
    // reporter may store, counted by its address (and by org_name, case aside: GOOGLE.com).
    for (let i = 0; i < 48; i++) await s.store.dmarc.recordReport(plan(`bulk-${i}`, { org: 'GOOGLE.com' }));
    const r = await s.store.dmarc.recordReport(plan('one-too-many', { org: 'Another' }));
    expect(r).toMatchObject({ recorded: false, emails: 0 });
    expect(r.limited).toMatch(/^the address 198\.51\.100\.7 has sent 50 DMARC reports about example\.test today/);
    // By org_name: google.com's 50th report, from no known address, is stored; its 51st is not.
    const noIp = (id: string) => {
      const p = plan(id);
      return { ...p, report: { ...p.report, sender_ip: null }, reporter: { ...p.reporter, sender_ip: null } };
    };
    expect(await s.store.dmarc.recordReport(noIp('fiftieth'))).toMatchObject({ recorded: true });
    const byOrg = await s.store.dmarc.recordReport(noIp('fifty-first'));
    expect(byOrg).toMatchObject({ recorded: false, emails: 0 });
    expect(byOrg.limited).toMatch(/^google\.com has sent 50 DMARC reports about example\.test today/);
    expect(
      await s.query("SELECT report_id FROM dmarc_reports WHERE report_id IN ('one-too-many', 'fifty-first')"),
    ).toEqual([]);
  });
});
