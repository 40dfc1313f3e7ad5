import { describe, expect, it } from 'vitest';
import { planRetentionBatch, type RetentionRow } from './retention-plan.ts';

const CUTOFF = '2026-10-10T00:00:00.000Z';
const row = (seq: number, day: number, status = 'DELIVERED'): RetentionRow => ({
  seq,
  created_at: `2026-10-${String(day).padStart(2, '0')}T00:00:00.000Z`,
  status,
});

describe('planRetentionBatch', () => {
  it('acts on final emails before the cutoff and holds those still being delivered', () => {
    const plan = planRetentionBatch(
      CUTOFF,
      { after: 0, held: [], limit: 3 },
      [],
      [row(1, 1), row(2, 2, 'SENDING'), row(3, 3, 'QUEUED')],
    );
    expect(plan).toEqual({ act: [1], next: 3, held: [2, 3], done: false });
  });

  it('stops at the first email created at or after the cutoff, without passing it', () => {
    const plan = planRetentionBatch(CUTOFF, { after: 4, held: [], limit: 3 }, [], [row(5, 5), row(6, 10), row(7, 1)]);
    expect(plan).toEqual({ act: [5], next: 5, held: [], done: true });
  });

  it('looks again at the emails held before: acts on those now final, holds the rest again', () => {
    const plan = planRetentionBatch(
      CUTOFF,
      { after: 9, held: [2, 3], limit: 5 },
      [row(2, 2), row(3, 3, 'SENDING')],
      [],
    );
    expect(plan).toEqual({ act: [2], next: 9, held: [3], done: true });
  });

  it('is done when the page comes back short', () => {
    expect(planRetentionBatch(CUTOFF, { after: 0, held: [], limit: 3 }, [], [row(1, 1)]).done).toBe(true);
    expect(planRetentionBatch(CUTOFF, { after: 0, held: [], limit: 1 }, [], [row(1, 1)]).done).toBe(false);
  });
});
