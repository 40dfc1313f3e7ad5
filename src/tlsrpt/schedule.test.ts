import { describe, expect, it } from 'vitest';
import { claimPlan, dueDay, finishPlan, LEASE_MS, sendDelayMs, type ReportRow } from './schedule.ts';

const NOW = Date.parse('2026-03-16T00:30:00.000Z');
const row = (over: Partial<ReportRow>): ReportRow => ({
  day: '2026-03-15',
  policy_domain: 'x.test',
  report_id: 'r1',
  status: 'retry',
  attempts: 1,
  lease_until: null,
  next_attempt_at: null,
  destinations: [],
  detail: null,
  updated_at: '2026-03-16T00:10:00.000Z',
  ...over,
});
const failed = [{ uri: 'https://r.test/', outcome: 'failed' as const, detail: 'HTTP 500' }];

describe('sendDelayMs', () => {
  it("waits at least two minutes after midnight, so every node's last flush of the day is in, and at most ten", () => {
    expect(sendDelayMs(0)).toBe(120_000);
    expect(sendDelayMs(0.999999)).toBeLessThan(600_000);
    expect(sendDelayMs(0.5)).toBe(360_000);
  });
});

describe('dueDay', () => {
  it("is yesterday's day once midnight and the delay have passed", () => {
    expect(dueDay(Date.parse('2026-03-16T00:04:59.999Z'), 300_000)).toBeUndefined();
    expect(dueDay(Date.parse('2026-03-16T00:05:00.000Z'), 300_000)).toBe('2026-03-15');
    expect(dueDay(Date.parse('2026-03-16T23:59:59.000Z'), 300_000)).toBe('2026-03-15');
  });
});

describe('claimPlan', () => {
  it('claims a new report, a due retry and an expired lease; nothing else', () => {
    expect(claimPlan(undefined, NOW, 'new')).toMatchObject({ report_id: 'new', attempts: 1 });
    expect(claimPlan(row({ next_attempt_at: '2026-03-16T00:30:00.000Z' }), NOW, 'new')).toMatchObject({
      report_id: 'r1',
      attempts: 2,
      lease_until: new Date(NOW + LEASE_MS).toISOString(),
    });
    expect(claimPlan(row({ next_attempt_at: '2026-03-16T00:30:00.001Z' }), NOW, 'new')).toBeUndefined();
    expect(claimPlan(row({ status: 'sending', lease_until: '2026-03-16T00:29:00.000Z' }), NOW, 'n')).toBeDefined();
    expect(claimPlan(row({ status: 'sending', lease_until: '2026-03-16T00:31:00.000Z' }), NOW, 'n')).toBeUndefined();
    for (const status of ['sent', 'failed', 'skipped'] as const)
      expect(claimPlan(row({ status, next_attempt_at: '2026-03-16T00:00:00.000Z' }), NOW, 'n')).toBeUndefined();
  });
});

describe('finishPlan', () => {
  it('sent without a failed destination; retried on the schedule; given up after it or past the next day', () => {
    expect(finishPlan('2026-03-15', 1, [{ ...failed[0]!, outcome: 'skipped' }], NOW)).toEqual({
      status: 'sent',
      next_attempt_at: null,
    });
    expect(finishPlan('2026-03-15', 1, failed, NOW)).toEqual({
      status: 'retry',
      next_attempt_at: '2026-03-16T00:45:00.000Z',
    });
    expect(finishPlan('2026-03-15', 4, failed, NOW).next_attempt_at).toBe('2026-03-16T06:30:00.000Z');
    expect(finishPlan('2026-03-15', 5, failed, NOW)).toEqual({ status: 'failed', next_attempt_at: null });
    // Never past the end of the day after the report's day.
    expect(finishPlan('2026-03-15', 4, failed, Date.parse('2026-03-16T20:00:00.000Z')).status).toBe('failed');
  });
});
