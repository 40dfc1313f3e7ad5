import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { withBusyTimeout } from './busy-timeout.ts';

describe('withBusyTimeout', () => {
  const timeout = (db: Database.Database) => db.pragma('busy_timeout', { simple: true });

  it('sets the timeout for the call and the other one after it, every time', () => {
    const db = new Database(':memory:');
    for (const [ms, after] of [
      [0, 5000],
      [250, 40],
      [0, 5000],
    ] as const) {
      expect(withBusyTimeout(db, ms, after, () => timeout(db))).toBe(ms);
      expect(timeout(db)).toBe(after);
    }
    db.close();
  });

  it('sets the timeout after the call when the call throws', () => {
    const db = new Database(':memory:');
    expect(() =>
      withBusyTimeout(db, 0, 1234, () => {
        throw new Error('busy');
      }),
    ).toThrow('busy');
    expect(timeout(db)).toBe(1234);
    db.close();
  });
});
