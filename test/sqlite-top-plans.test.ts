// svc top's readings of one project (GET /v1/top, polled every second) walk what changed or what
// waits, never the project's history.
//
// A reading counts the events written since the one before (a range of email_events' rowids)
// and the queue (the recipients with a due time, through the partial index recipients_due). With
// the project's filter written `e.project_id = ?`, SQLite served it from the project's index
// instead and walked every email or recipient the project ever had: a reading of a project with
// 100,000 emails took 22.8 ms of the event loop, 0.77 ms walking the ranges (docs/performance.md,
// issue 36, tenth session). The plans are checked here; the whole-server reading (`svc top` on
// the data dir) had the bounded plans already.
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopReader } from '../src/top/repo.ts';
import { openStore, type OpenedStore } from './contract/stores.ts';

type Db = Database.Database;

/** Each statement the reader prepares (its text) with its query plan's lines. */
function plansOf(db: Db, projectId: string | undefined): { sql: string; plan: string[] }[] {
  const texts: string[] = [];
  const spy = new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'prepare') return Reflect.get(target, key, receiver) as unknown;
      return (sql: string) => {
        texts.push(sql);
        return target.prepare(sql);
      };
    },
  });
  createTopReader(spy, projectId === undefined ? {} : { projectId });
  return texts.map((sql) => {
    const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1]!, 'x']));
    const explain = db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`);
    const rows = Object.keys(params).length
      ? explain.all(params)
      : explain.all(
          ...sql
            .split('?')
            .slice(1)
            .map(() => 'x'),
        );
    return { sql: sql.replace(/\s+/g, ' '), plan: rows.map((r) => r.detail) };
  });
}

describe("svc top's readings of one project on SQLite", () => {
  let s: OpenedStore;
  let db: Db;
  beforeAll(async () => {
    s = await openStore('sqlite');
    db = s.store.sqlite!;
  });
  afterAll(() => s?.close());

  it('walk the new events by rowid and the queue by its due index, not the project through its indexes', () => {
    const plans = plansOf(db, 'p1');
    const reading = (part: string) => plans.filter((p) => p.sql.includes(part));
    const events = reading('FROM email_events ev JOIN emails e ON e.seq = ev.email_seq WHERE ev.seq > +@after');
    const queue = reading('FROM recipients r JOIN emails e ON e.seq = r.email_seq WHERE r.next_attempt_at IS NOT NULL');
    const waiting = reading('AS deferred FROM recipients WHERE next_attempt_at IS NOT NULL');
    // The per-second counts and the settled recipients' domains; the queue; the busiest destinations.
    expect([events.length, queue.length, waiting.length]).toEqual([2, 1, 1]);
    for (const p of events)
      expect(p.plan[0], p.sql).toMatch(/^SEARCH ev USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
    for (const p of [...queue, ...waiting]) expect(p.plan[0], p.sql).toMatch(/USING (COVERING )?INDEX recipients_due /);
    for (const p of plans) expect(p.plan.join(' | '), p.sql).not.toMatch(/emails_project |recipients_project_address/);
  });

  it('the whole-server reading keeps the same bounded plans', () => {
    const plans = plansOf(db, undefined);
    for (const p of plans.filter((x) => x.sql.includes('next_attempt_at IS NOT NULL')))
      expect(p.plan[0], p.sql).toMatch(/USING (COVERING )?INDEX recipients_due /);
    for (const p of plans.filter(
      (x) => x.sql.includes('WHERE seq > +@after') || x.sql.includes('WHERE ev.seq > +@after'),
    ))
      expect(p.plan[0], p.sql).toMatch(/USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
  });
});
