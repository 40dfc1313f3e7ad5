import { describe, expect, it } from 'vitest';
import type { AppError } from '../errors.ts';
import { scheduleTime } from './schedule.ts';

const now = Date.parse('2026-03-15T12:00:00.000Z');
const fieldOf = (v: string) => {
  try {
    scheduleTime(v, now);
  } catch (e) {
    const err = e as AppError;
    return { code: err.code, field: (err.details as { fields: { field: string; message: string }[] }).fields[0] };
  }
  throw new Error(`${v} was taken`);
};

describe('scheduleTime', () => {
  it('reads ISO-8601 with an offset, and offsets from now as people write them', () => {
    expect(scheduleTime('2026-03-16T09:30:00Z', now)).toBe(Date.parse('2026-03-16T09:30:00Z'));
    expect(scheduleTime('2026-03-16T10:30:00+01:00', now)).toBe(Date.parse('2026-03-16T09:30:00Z'));
    expect(scheduleTime('2026-03-16 09:30:00.250z', now)).toBe(Date.parse('2026-03-16T09:30:00.250Z'));
    expect(scheduleTime('in 1 hour', now)).toBe(now + 3_600_000);
    expect(scheduleTime('In 30 min', now)).toBe(now + 1_800_000);
    expect(scheduleTime('in 2 days', now)).toBe(now + 2 * 86_400_000);
    expect(scheduleTime('in an hour', now)).toBe(now + 3_600_000);
    expect(scheduleTime('in 90s', now)).toBe(now + 90_000);
    expect(scheduleTime('in 4 weeks', now)).toBe(now + 28 * 86_400_000);
    expect(scheduleTime('now', now)).toBe(now);
  });

  it('takes a time a few seconds past as now', () => {
    expect(scheduleTime('2026-03-15T11:59:30Z', now)).toBe(now);
  });

  it('refuses the past, beyond 30 days, a time without a zone, and words it does not know, naming the field', () => {
    for (const v of [
      '2026-03-15T11:58:00Z',
      'in 31 days',
      'in 5 weeks',
      '2026-03-16T09:30:00',
      'tomorrow',
      'in 3 fortnights',
      '',
      'in -1 hour',
    ]) {
      expect(fieldOf(v)).toMatchObject({ code: 'request_validation_failed', field: { field: 'scheduled_at' } });
    }
    expect(fieldOf('2026-03-15T11:00:00Z').field!.message).toMatch(/in the past/);
    expect(fieldOf('in 31 days').field!.message).toMatch(/more than 30 days ahead/);
    expect(scheduleTime('in 30 days', now)).toBe(now + 30 * 86_400_000);
  });
});
