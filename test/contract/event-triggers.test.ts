// The event types both dialects' triggers on email_events name (the webhook outbox and the
// hourly stats rollup) are the lists of src/events/index.ts: read from a database migrated to
// the latest schema, on SQLite and on PostgreSQL (issue 30: "the event-type list … once").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAT_TYPES, WEBHOOK_EVENTS } from '../../src/events/index.ts';
import { openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

/**
 * The event types a trigger fires for: the quoted literals of its WHEN clause, or, for one that
 * runs once per statement (PostgreSQL's webhook outbox, migration 0023), of the `type IN (…)`
 * its function filters the statement's events by.
 */
function typesFiredFor(sql: string): string[] {
  const when = /\bFOR EACH STATEMENT\b/i.test(sql)
    ? /\btype IN \(([^)]*)\)/i.exec(sql)
    : /\bWHEN\b([\s\S]*?)\b(?:BEGIN|EXECUTE)\b/i.exec(sql);
  if (!when) throw new Error(`no WHEN clause or type IN (…) in ${sql}`);
  return [...when[1]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!).sort();
}

describe.each(STORE_KINDS)('the email_events triggers on %s', (kind) => {
  let s: OpenedStore;
  let triggers: Map<string, string>;
  beforeAll(async () => {
    s = await openStore(kind);
    const rows =
      kind === 'sqlite'
        ? await s.query<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        : await s.query<{ name: string; sql: string }>(
            `SELECT t.tgname AS name, pg_get_triggerdef(t.oid) || ' ' || p.prosrc AS sql
             FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid WHERE NOT t.tgisinternal`,
          );
    triggers = new Map(rows.map((r) => [r.name, r.sql]));
  });
  afterAll(() => s?.close());

  it('fill the webhook outbox for exactly the events a webhook may subscribe to', () => {
    expect(typesFiredFor(triggers.get('email_events_webhooks')!)).toEqual([...WEBHOOK_EVENTS].sort());
  });

  it("fire webhooks for a recipient's unsubscribe (issue 32), which the stats do not count", () => {
    expect(typesFiredFor(triggers.get('email_events_webhooks')!)).toContain('unsubscribed');
    expect(typesFiredFor(triggers.get('email_events_stats')!)).not.toContain('unsubscribed');
  });

  it('count in the hourly stats exactly the types the rollup reports', () => {
    expect(typesFiredFor(triggers.get('email_events_stats')!)).toEqual([...STAT_TYPES].sort());
  });
});
