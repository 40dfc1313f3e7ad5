// The SQLite reads on the hot paths keep their prepared plan from one call to the next.
//
// SQLite re-prepares a statement whose plan might depend on a bound value each time a value is
// bound to it: a join with `column = ?` in its WHERE, or `LIMIT ?`. better-sqlite3 then
// compiles a new function to build its rows (lib/database.js, rowFactory): 277 µs of CPU a call
// for the 46 columns of a claimed email, measured in bench:nodes (docs/performance.md, issue 36).
// Written `= +?`, the value is an expression SQLite does not look into, and the plan stays.
//
// The compiles are counted where better-sqlite3 makes them, through the global `Function`
// (test/row-builders.ts). A control (a join with a bare `?`) must show them, so that the count
// cannot read 0 because better-sqlite3 stopped making them that way.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Recipient } from '../src/emails/store.ts';
import { newEmail } from './postgres/email-fixture.ts';
import { AT, openStore, type OpenedStore } from './contract/stores.ts';
import { compilesPerStatement } from './row-builders.ts';

/** How many row builders better-sqlite3 compiled while `run` ran, all statements together. */
async function compilesDuring(run: () => unknown): Promise<number> {
  return [...(await compilesPerStatement(run)).values()].reduce((a, b) => a + b, 0);
}

/** Compiles during the second and third of three calls with different values (the first may compile). */
async function compilesAfterFirst<T>(values: T[], call: (v: T) => unknown): Promise<number> {
  await call(values[0]!);
  return compilesDuring(async () => {
    for (const v of values.slice(1)) await call(v);
  });
}

describe('SQLite statements on the hot paths are prepared once', () => {
  let s: OpenedStore;
  const seqs: number[] = [];
  const ids = ['0192e0a0-0000-7000-8000-000000000001', '0192e0a0-0000-7000-8000-000000000002'];
  beforeAll(async () => {
    s = await openStore('sqlite');
    for (const id of [...ids, '0192e0a0-0000-7000-8000-000000000003']) {
      const recipients: Recipient[] = [{ address: `to-${id.slice(-1)}@x.test`, kind: 'to' }];
      await s.store.emails.acceptEmail(newEmail(id, { to: [recipients[0]!.address], created_at: AT }), recipients, {
        suppress: false,
        volume: null,
        idempotency: null,
      });
      seqs.push((await s.store.emails.findById(id))!.seq);
    }
  });
  afterAll(() => s?.close());

  it('the control: a join read with a bare parameter compiles its rows on every call', async () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT); CREATE TABLE b (id INTEGER PRIMARY KEY, y TEXT);
      INSERT INTO a VALUES (1, 'a'), (2, 'b'), (3, 'c'); INSERT INTO b VALUES (1, 'a'), (2, 'b'), (3, 'c')`);
    const bare = db.prepare('SELECT a.*, b.y FROM a JOIN b ON b.id = a.id WHERE a.id = ?');
    const plus = db.prepare('SELECT a.*, b.y FROM a JOIN b ON b.id = a.id WHERE a.id = +?');
    expect(await compilesAfterFirst([1, 2, 3], (v) => bare.get(v))).toBe(2);
    expect(await compilesAfterFirst([1, 2, 3], (v) => plus.get(v))).toBe(0);
    db.close();
  });

  it("delivery's claimed emails, and an email by id", async () => {
    expect(await compilesAfterFirst(seqs, (seq) => s.store.delivery.findEmails([seq]))).toBe(0);
    expect(await compilesAfterFirst([...ids, ids[0]!], (id) => s.store.emails.findById(id))).toBe(0);
  });

  it("a domain's DKIM keys, a dashboard session's token and member, and the routes of a receiving domain", async () => {
    await s.exec(`INSERT INTO users (id, email, password_hash, created_at) VALUES ('u2', 'two@example.com', 'h', '${AT}'),
        ('u3', 'three@example.com', 'h', '${AT}');
      INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ('o1', 'u1', 'OWNER', '${AT}'),
        ('o1', 'u2', 'ADMIN', '${AT}'), ('o1', 'u3', 'VIEWER', '${AT}');
      INSERT INTO session_families (id, user_id, created_at) VALUES ('f1', 'u1', '${AT}');
      INSERT INTO session_tokens (token_hash, family_id, kind, created_at, expires_at)
        VALUES ('h1', 'f1', 'access', '${AT}', '${AT}'), ('h2', 'f1', 'access', '${AT}', '${AT}'),
          ('h3', 'f1', 'refresh', '${AT}', '${AT}');
      INSERT INTO domains (id, organization_id, name, status, created_at, receiving)
        VALUES ('d1', 'o1', 'a.x.test', 'VERIFIED', '${AT}', 1), ('d2', 'o1', 'b.x.test', 'VERIFIED', '${AT}', 1);
      INSERT INTO inbound_routes (id, project_id, domain_id, domain, kind, local_part, action, created_at, updated_at)
        VALUES ('r1', 'p1', 'd1', 'a.x.test', 'exact', 'in', 'webhook', '${AT}', '${AT}'),
          ('r2', 'p1', 'd2', 'b.x.test', 'exact', 'in', 'webhook', '${AT}', '${AT}')`);
    await s.exec(`INSERT INTO domain_dkim_keys (id, domain_id, selector, algorithm, private_key, public_key, state, created_at)
      VALUES ('k1', 'd1', 's1', 'rsa', 'p', 'p', 'active', '${AT}'), ('k2', 'd2', 's1', 'rsa', 'p', 'p', 'active', '${AT}')`);
    expect(
      await compilesAfterFirst(['a.x.test', 'b.x.test', 'a.x.test'], (d) => s.store.domains.findDomainWithKeys(d)),
    ).toBe(0);
    expect(await compilesAfterFirst(['h1', 'h2', 'h3'], (h) => s.store.sessions.findToken(h))).toBe(0);
    expect(await compilesAfterFirst(['u1', 'u2', 'u3'], (u) => s.store.accounts.findMember('o1', u))).toBe(0);
    expect(await compilesAfterFirst(['u1', 'u2', 'u3'], (u) => s.store.accounts.listOrgsOfUser(u))).toBe(0);
    expect(await compilesAfterFirst(['a.x.test', 'b.x.test', 'a.x.test'], (d) => s.store.receiving.routesAt(d))).toBe(
      0,
    );
  });

  it('a page of GET /v1/emails, and the lists of keys, projects and stats', async () => {
    const page = (q: Record<string, unknown>) => s.store.emails.list('p1', { limit: 25, ...q });
    // Each call returns rows: a builder is only compiled for a statement that returns one.
    expect(await compilesAfterFirst([1, 2, 3], (limit) => page({ limit }))).toBe(0);
    expect(
      await compilesAfterFirst([ids[1], '0192e0a0-0000-7000-8000-000000000003', ids[1]], (before) => page({ before })),
    ).toBe(0);
    expect(await compilesAfterFirst(['QUEUED', 'QUEUED', 'QUEUED'], (status) => page({ status, limit: 2 }))).toBe(0);
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'Q', '${AT}');
      INSERT INTO organizations (id, name, plan, created_at) VALUES ('o2', 'Two', 'FREE', '${AT}');
      INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p3', 'o2', 'R', '${AT}');
      INSERT INTO api_keys (id, project_id, name, prefix, key_hash, permissions, env, created_at)
        VALUES ('k1', 'p1', 'a', 'x', 'h1', 'FULL_ACCESS', 'LIVE', '${AT}'),
          ('k2', 'p2', 'b', 'x', 'h2', 'FULL_ACCESS', 'LIVE', '${AT}'), ('k3', 'p3', 'c', 'x', 'h3', 'FULL_ACCESS', 'LIVE', '${AT}')`);
    expect(await compilesAfterFirst(['p1', 'p2', 'p3'], (p) => s.store.keys.listKeys(p, true))).toBe(0);
    expect(await compilesAfterFirst(['o1', 'o2', 'o1'], (o) => s.store.accounts.listProjects(o))).toBe(0);
    const hour = AT.slice(0, 13);
    expect(
      await compilesAfterFirst(['2000-01-01T00', '2001-01-01T00', '2002-01-01T00'], (from) =>
        s.store.stats.countByBucket('p1', 'day', from, `${hour}~`),
      ),
    ).toBe(0);
  });
});
