// The stats store (src/stats/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketCount } from '../../src/stats/index.ts';
import { openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

describe.each(STORE_KINDS)('StatsStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    // The rollup as the trigger on email_events keeps it; another project's and hours out of range around.
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'Q', 'x');
      INSERT INTO email_stats (project_id, bucket_hour, type, count) VALUES
        ('p1', '2026-11-25T23', 'delivered', 100),
        ('p1', '2026-11-26T00', 'delivered', 2),
        ('p1', '2026-11-26T10', 'delivered', 3),
        ('p1', '2026-11-26T10', 'opened', 1),
        ('p1', '2026-11-26T23', 'bounced', 4),
        ('p1', '2026-11-26T23', 'bounced:mailbox-full', 4),
        ('p1', '2026-11-27T00', 'delivered', 5),
        ('p1', '2026-11-28T00', 'delivered', 100),
        ('p2', '2026-11-26T10', 'delivered', 100)`);
  });
  afterAll(() => s?.close());

  const sorted = (rows: BucketCount[]) => [...rows].sort((a, b) => (a.bucket + a.type < b.bucket + b.type ? -1 : 1));

  it("countByBucket: by hour, one row per hour and type (a bounce category's too) of the project's hours in [from, to)", async () => {
    expect(sorted(await s.store.stats.countByBucket('p1', 'hour', '2026-11-26T00', '2026-11-27T00'))).toEqual([
      { bucket: '2026-11-26T00', type: 'delivered', n: 2 },
      { bucket: '2026-11-26T10', type: 'delivered', n: 3 },
      { bucket: '2026-11-26T10', type: 'opened', n: 1 },
      { bucket: '2026-11-26T23', type: 'bounced', n: 4 },
      { bucket: '2026-11-26T23', type: 'bounced:mailbox-full', n: 4 },
    ]);
  });

  it('countByBucket: by day, the hours of each UTC day summed, as numbers', async () => {
    expect(sorted(await s.store.stats.countByBucket('p1', 'day', '2026-11-26T00', '2026-11-28T00'))).toEqual([
      { bucket: '2026-11-26', type: 'bounced', n: 4 },
      { bucket: '2026-11-26', type: 'bounced:mailbox-full', n: 4 },
      { bucket: '2026-11-26', type: 'delivered', n: 5 },
      { bucket: '2026-11-26', type: 'opened', n: 1 },
      { bucket: '2026-11-27', type: 'delivered', n: 5 },
    ]);
  });

  it('countByBucket: no row for a range without events', async () => {
    expect(await s.store.stats.countByBucket('p1', 'day', '2026-12-01T00', '2026-12-02T00')).toEqual([]);
  });
});
