// The TLS reporting store (src/tlsrpt/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CountRow } from '../../src/tlsrpt/index.ts';
import { LEASE_MS } from '../../src/tlsrpt/schedule.ts';
import { openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const DAY = '2026-11-25';
const NOW = Date.parse('2026-11-26T00:05:00.000Z');

const row = (over: Partial<CountRow> = {}): CountRow => ({
  day: DAY,
  policy_domain: 'dest.test',
  policy_type: 'sts',
  policy_string: ['version: STSv1', 'mode: enforce', 'mx: mx.dest.test', 'max_age: 86400'],
  mx_host: 'mx.dest.test',
  receiving_ip: '192.0.2.1',
  sending_ip: '198.51.100.7',
  result: 'success',
  failure_reason: '',
  count: 1,
  ...over,
});

describe.each(STORE_KINDS)('TlsrptStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
  });
  afterAll(() => s?.close());

  it('addCounts adds to the same group and keeps others apart; listCounts reads them back', async () => {
    const fail = row({ result: 'certificate-expired', failure_reason: 'expired on 2026-11-01', count: 2 });
    await s.store.tlsrpt.addCounts([row({ count: 3 }), fail]);
    await s.store.tlsrpt.addCounts([row({ count: 4 }), row({ day: '2026-11-24' }), row({ policy_domain: 'b.test' })]);
    const got = await s.store.tlsrpt.listCounts(DAY, 'dest.test');
    expect(got).toEqual([fail, row({ count: 7 })]);
    expect(await s.store.tlsrpt.listCounts(DAY, 'none.test')).toEqual([]);
  });

  it("listOpenDomains: the day's counted domains, in byte order, until their report is final", async () => {
    expect(await s.store.tlsrpt.listOpenDomains(DAY)).toEqual(['b.test', 'dest.test']);
    expect(await s.store.tlsrpt.listOpenDomains('2026-11-23')).toEqual([]);
  });

  it('claimReport: one claim at a time; finishReport records the outcome; a due retry and an expired lease claim again', async () => {
    const first = await s.store.tlsrpt.claimReport(DAY, 'dest.test', NOW, 'id-1');
    expect(first).toMatchObject({ day: DAY, policy_domain: 'dest.test', report_id: 'id-1', attempts: 1 });
    // Held: neither a second claim nor one from another node with another id.
    expect(await s.store.tlsrpt.claimReport(DAY, 'dest.test', NOW, 'id-2')).toBeUndefined();
    const destinations = [{ uri: 'https://r.test/', outcome: 'failed' as const, detail: 'HTTP 500' }];
    const retryAt = new Date(NOW + 60_000).toISOString();
    await s.store.tlsrpt.finishReport(
      DAY,
      'dest.test',
      { status: 'retry', next_attempt_at: retryAt, destinations, detail: 'https://r.test/: HTTP 500' },
      new Date(NOW).toISOString(),
    );
    expect(await s.store.tlsrpt.claimReport(DAY, 'dest.test', NOW + 59_000, 'id-3')).toBeUndefined();
    const again = await s.store.tlsrpt.claimReport(DAY, 'dest.test', NOW + 60_000, 'id-4');
    expect(again).toMatchObject({ report_id: 'id-1', attempts: 2, destinations });
    // A node that stopped mid-send: its lease runs out and another node takes the report over.
    expect(await s.store.tlsrpt.claimReport(DAY, 'dest.test', NOW + 60_000 + LEASE_MS, 'id-5')).toMatchObject({
      report_id: 'id-1',
      attempts: 3,
    });
    await s.store.tlsrpt.finishReport(
      DAY,
      'dest.test',
      { status: 'sent', next_attempt_at: null, destinations: [{ ...destinations[0]!, outcome: 'sent' }], detail: null },
      new Date(NOW + 120_000).toISOString(),
    );
    expect(await s.store.tlsrpt.claimReport(DAY, 'dest.test', NOW + 86_400_000, 'id-6')).toBeUndefined();
    expect(await s.store.tlsrpt.listOpenDomains(DAY)).toEqual(['b.test']);
  });

  it('claimReport: of two claims at once, exactly one wins', async () => {
    const both = await Promise.all([
      s.store.tlsrpt.claimReport(DAY, 'b.test', NOW, 'x-1'),
      s.store.tlsrpt.claimReport(DAY, 'b.test', NOW, 'x-2'),
    ]);
    expect(both.filter((c) => c !== undefined)).toHaveLength(1);
  });

  it('listReports: the reports from a day on, newest first, with their destinations', async () => {
    const reports = await s.store.tlsrpt.listReports('2026-11-01');
    expect(reports.map((r) => [r.day, r.policy_domain, r.status, r.attempts])).toEqual([
      [DAY, 'b.test', 'sending', 1],
      [DAY, 'dest.test', 'sent', 3],
    ]);
    expect(reports[1]).toMatchObject({
      report_id: 'id-1',
      destinations: [{ uri: 'https://r.test/', outcome: 'sent', detail: 'HTTP 500' }],
      next_attempt_at: null,
      lease_until: null,
    });
    expect(await s.store.tlsrpt.listReports('2026-11-26')).toEqual([]);
  });
});
