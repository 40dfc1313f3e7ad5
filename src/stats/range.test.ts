import { describe, expect, it } from 'vitest';
import type { AppError } from '../errors.ts';
import { resolveRange } from './range.ts';

const NOW = Date.parse('2026-11-24T15:42:10.000Z');
const iso = (r: { from: number; to: number }) => [new Date(r.from).toISOString(), new Date(r.to).toISOString()];

describe('resolveRange', () => {
  it('defaults to the last 7 days by day and the last 24 hours by hour, the current bucket included', () => {
    expect(iso(resolveRange({ granularity: 'day' }, NOW))).toEqual([
      '2026-11-18T00:00:00.000Z',
      '2026-11-25T00:00:00.000Z',
    ]);
    expect(resolveRange({ granularity: 'hour' }, NOW)).toMatchObject({ buckets: 24 });
    expect(iso(resolveRange({ granularity: 'hour' }, NOW))[1]).toBe('2026-11-24T16:00:00.000Z');
  });

  it('widens from down and to up to whole UTC buckets; to is exclusive', () => {
    const q = { granularity: 'day' as const, from: '2026-11-01T23:30:00+02:00', to: '2026-11-03' };
    expect(resolveRange(q, NOW)).toMatchObject({ buckets: 2 });
    expect(iso(resolveRange(q, NOW))).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-03T00:00:00.000Z']);
    const within = { granularity: 'hour' as const, from: '2026-11-01T10:05:00Z', to: '2026-11-01T10:06:00Z' };
    expect(resolveRange(within, NOW)).toMatchObject({ buckets: 1 });
    expect(resolveRange({ granularity: 'day', to: '2026-11-03' }, NOW)).toMatchObject({ buckets: 7 });
  });

  it('refuses an empty or reversed range and one past the bucket cap', () => {
    const field = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return [(e as AppError).code, (e as AppError).details];
      }
      return undefined;
    };
    expect(field(() => resolveRange({ granularity: 'day', from: '2026-11-03', to: '2026-11-03' }, NOW))).toEqual([
      'request_validation_failed',
      { fields: [{ field: 'from', message: 'must be before to', code: 'invalid_range' }] },
    ]);
    expect(resolveRange({ granularity: 'hour', from: '2026-10-01', to: '2026-11-01' }, NOW).buckets).toBe(744);
    expect(
      field(() => resolveRange({ granularity: 'hour', from: '2026-10-01', to: '2026-11-01T01:00:00Z' }, NOW)),
    ).toMatchObject(['request_validation_failed', { fields: [{ field: 'to', code: 'too_big' }] }]);
    expect(resolveRange({ granularity: 'day', from: '2025-11-01', to: '2026-11-02' }, NOW).buckets).toBe(366);
  });
});
