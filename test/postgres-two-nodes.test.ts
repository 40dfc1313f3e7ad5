import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgAccountsRepo } from '../src/accounts/repo-pg.ts';
import type { AccountsStore } from '../src/accounts/store.ts';
import { createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createPgDomainsRepo, type PgDomainsRepo } from '../src/domains/repo-pg.ts';
import { createPgSessionsRepo } from '../src/sessions/repo-pg.ts';
import type { SessionsStore } from '../src/sessions/store.ts';
import { migratedPgDatabase, pgNode, type PgNode } from './postgres/db.ts';

// Rules one SQLite writer keeps by itself, kept by row locks on PostgreSQL when two nodes
// write at the same moment (issue 17, item 2): a refresh token rotates once, a domain ceiling
// holds, and an organization keeps an OWNER.

type Node = PgNode & { sessions: SessionsStore; domains: PgDomainsRepo; accounts: AccountsStore };
let a: Node;
let b: Node;
let drop: () => Promise<void>;
const AT = '2026-11-26T12:00:00.000Z';
const LATER = '2026-11-27T12:00:00.000Z';
const audited = { actor: { type: 'cli' as const, os_user: 'root' }, atMs: Date.parse(AT) };
const entry = (action: string) => ({
  ...audited,
  entry: { organization_id: 'o1', action, target_type: 'x', target_id: 'x', before: null, after: null },
});

beforeAll(async () => {
  const db = await migratedPgDatabase('two_nodes');
  drop = db.drop;
  const node = async (): Promise<Node> => {
    const n = await pgNode(db.url);
    const audit = createPgAuditWriter();
    return {
      ...n,
      sessions: createPgSessionsRepo(n.pool, n.tx),
      domains: createPgDomainsRepo(n.pool, n.tx, audit),
      accounts: createPgAccountsRepo(n.pool, n.tx, audit),
    };
  };
  [a, b] = [await node(), await node()];
  await a.pool.query(
    `INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'one@x.test', 'h', 'x'), ('u2', 'two@x.test', 'h', 'x');
     INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
     INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ('o1', 'u1', 'OWNER', 'x'), ('o1', 'u2', 'OWNER', 'x')`,
  );
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await drop?.();
});

describe('two nodes writing at once on PostgreSQL', () => {
  it('rotate a refresh token once: the other node sees a reuse and the family is revoked', async () => {
    await a.sessions.startFamily('f1', 'u1', AT, [{ token_hash: 'r1', kind: 'refresh', expires_at: LATER }]);
    const next = (h: string) => [{ token_hash: h, kind: 'refresh' as const, expires_at: LATER }];
    const results = await Promise.all([
      a.sessions.rotate('r1', AT, next('ra')),
      b.sessions.rotate('r1', AT, next('rb')),
    ]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'reused' }]);
    expect((await a.sessions.findToken('r1'))?.family_revoked_at).toBe(AT);
  });

  it('hold an organization to its ceiling of domains', async () => {
    const row = (id: string) => ({
      id,
      organization_id: 'o1',
      name: `${id}.example.com`,
      dkim_selector: 's',
      dkim_private_key: 'k',
      dkim_public_key: 'p',
      created_at: AT,
    });
    const made = await Promise.all(
      Array.from({ length: 8 }, (_v, i) =>
        (i % 2 ? a : b).domains.createDomain(row(`d${i}`), 3, undefined, entry('domain.create')),
      ),
    );
    expect(made.filter(Boolean)).toHaveLength(3);
    expect(await a.domains.listDomains('o1')).toHaveLength(3);
  });

  it('keep one OWNER when both are demoted at the same moment', async () => {
    const results = await Promise.allSettled([
      a.accounts.setMemberRole('o1', 'u1', 'ADMIN', entry('member.update')),
      b.accounts.setMemberRole('o1', 'u2', 'ADMIN', entry('member.update')),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const owners = await a.pool.query(
      "SELECT user_id FROM memberships WHERE organization_id = 'o1' AND role = 'OWNER'",
    );
    expect(owners.rows).toHaveLength(1);
  });
});
