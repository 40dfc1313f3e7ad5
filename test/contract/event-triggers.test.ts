// The event types both dialects' triggers on email_events name (the webhook outbox and the
// hourly stats rollup) are the lists of src/events/index.ts: read from a database migrated to
// the latest schema, on SQLite and on PostgreSQL (issue 30: "the event-type list … once").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAT_TYPES, WEBHOOK_EVENTS } from '../../src/events/index.ts';
import { openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

/** The quoted literals of a trigger's WHEN clause: the event types it fires for. */
function typesInWhen(sql: string): string[] {
  const when = /\bWHEN\b([\s\S]*?)\b(?:BEGIN|EXECUTE)\b/i.exec(sql);
  if (!when) throw new Error(`no WHEN clause in ${sql}`);
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
            'SELECT tgname AS name, pg_get_triggerdef(oid) AS sql FROM pg_trigger WHERE NOT tgisinternal',
          );
    triggers = new Map(rows.map((r) => [r.name, r.sql]));
  });
  afterAll(() => s?.close());

  it('fill the webhook outbox for exactly the events a webhook may subscribe to', () => {
    expect(typesInWhen(triggers.get('email_events_webhooks')!)).toEqual([...WEBHOOK_EVENTS].sort());
  });

  it("fire webhooks for a recipient's unsubscribe (issue 32), which the stats do not count", () => {
    expect(typesInWhen(triggers.get('email_events_webhooks')!)).toContain('unsubscribed');
    expect(typesInWhen(triggers.get('email_events_stats')!)).not.toContain('unsubscribed');
  });

  it('count in the hourly stats exactly the types the rollup reports', () => {
    expect(typesInWhen(triggers.get('email_events_stats')!)).toEqual([...STAT_TYPES].sort());
  });
});
