import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountsRepo } from '../src/accounts/repo.ts';
import { createPgAccountsRepo } from '../src/accounts/repo-pg.ts';
import { createAuditRepo, createAuditWriter } from '../src/audit/repo.ts';
import { createDomainsRepo } from '../src/domains/repo.ts';
import { createPgDomainsRepo } from '../src/domains/repo-pg.ts';
import { createSessionsRepo } from '../src/sessions/repo.ts';
import { createPgSessionsRepo } from '../src/sessions/repo-pg.ts';
import { isUniqueViolation } from '../src/store/errors.ts';
import { createPgAuditRepo, createPgAuditWriter } from '../src/audit/repo-pg.ts';
import { createServerSettings } from '../src/config/server-settings.ts';
import { createPgServerSettings } from '../src/config/server-settings-pg.ts';
import { describeRule } from '../src/delivery/classify.ts';
import { decide, type Decision } from '../src/delivery/outcome.ts';
import { createDeliveryRepo } from '../src/delivery/repo.ts';
import { createPgDeliveryRepo } from '../src/delivery/repo-pg.ts';
import { createNodesRepo, FRESH_NODES_SQL, type NodeRow } from '../src/nodes/repo.ts';
import { createPgNodesRepo } from '../src/nodes/repo-pg.ts';
import { createStatsRepo } from '../src/stats/repo.ts';
import { createPgStatsRepo } from '../src/stats/repo-pg.ts';
import { createCommitter } from '../src/store/committer.ts';
import { openDatabase } from '../src/store/db.ts';
import { createSecrets } from '../src/store/secrets.ts';
import { createPgSecrets } from '../src/store/secrets-pg.ts';
import { createSuppressionsRepo } from '../src/suppressions/repo.ts';
import { createPgSuppressionsRepo } from '../src/suppressions/repo-pg.ts';
import { createTemplatesRepo } from '../src/templates/repo.ts';
import { createPgTemplatesRepo } from '../src/templates/repo-pg.ts';
import { createTrackingRepo } from '../src/tracking/repo.ts';
import { createPgTrackingRepo } from '../src/tracking/repo-pg.ts';
import { migratedPgDatabase, pgNode } from './postgres/db.ts';

// The store seam (issue 17, item 1): the same scenarios against the SQLite repositories and
// their PostgreSQL twins, through the async operations both offer. A difference in what a
// store answers fails here, whichever store is wrong.

const AT = '2026-11-26T12:00:00.000Z';
const SEED = `INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'owner@example.com', 'h', 'x');
  INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', 'x');
  INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', 'x');
  INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
    VALUES ('e1', 'p1', 'LIVE', 'DELIVERED', 'a@x.test', '[]', 's', '${AT}')`;

function storeOf(kind: 'sqlite' | 'postgres') {
  return async () => {
    if (kind === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'svc-contract-'));
      const { db, close } = openDatabase(join(dir, 'data'), { create: true });
      db.exec(SEED);
      const tx = createCommitter(db, { windowMs: 1, maxBatch: 100 });
      const audit = createAuditWriter(db);
      const settings = createServerSettings(db, tx);
      const nodes = createNodesRepo(db, tx);
      return {
        query: (sql: string) => Promise.resolve(db.prepare(sql).all()),
        exec: (sql: string) => Promise.resolve(void db.exec(sql)),
        delivery: createDeliveryRepo(db, tx, { suppress: () => {} }),
        event: (id: string, type: string, at: string) =>
          Promise.resolve(
            void db
              .prepare(
                "INSERT INTO email_events (id, email_seq, type, created_at) SELECT ?, seq, ?, ? FROM emails WHERE id = 'e1'",
              )
              .run(id, type, at),
          ),
        nodes: {
          ...nodes,
          fresh: (since: string) => Promise.resolve(db.prepare<[string], NodeRow>(FRESH_NODES_SQL).all(since)),
        },
        secrets: createSecrets(db, tx, () => AT),
        stats: createStatsRepo(db),
        tracking: createTrackingRepo(db, tx),
        settings: { stored: () => Promise.resolve(settings.stored()), record: settings.record },
        suppressions: createSuppressionsRepo(db, tx, audit),
        templates: createTemplatesRepo(db, tx, audit),
        accounts: createAccountsRepo(db, tx, audit),
        domains: createDomainsRepo(db, tx, audit),
        sessions: createSessionsRepo(db, tx),
        auditLog: createAuditRepo(db),
        async close() {
          tx.close();
          await close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    const { url, drop } = await migratedPgDatabase('contract');
    const n = await pgNode(url);
    await n.pool.query(SEED);
    const audit = createPgAuditWriter();
    return {
      query: async (sql: string) => (await n.pool.query(sql)).rows,
      exec: async (sql: string) => void (await n.pool.query(sql)),
      delivery: createPgDeliveryRepo(n.pool, n.tx, { suppress: () => Promise.resolve() }),
      event: async (id: string, type: string, at: string) =>
        void (await n.pool.query(
          "INSERT INTO email_events (id, email_seq, type, created_at) SELECT $1, seq, $2, $3 FROM emails WHERE id = 'e1'",
          [id, type, at],
        )),
      nodes: createPgNodesRepo(n.pool, n.tx),
      secrets: createPgSecrets(n.tx, () => AT),
      stats: createPgStatsRepo(n.pool),
      tracking: createPgTrackingRepo(n.tx),
      settings: createPgServerSettings(n.pool, n.tx),
      suppressions: createPgSuppressionsRepo(n.pool, n.tx, audit),
      templates: createPgTemplatesRepo(n.pool, n.tx, audit),
      accounts: createPgAccountsRepo(n.pool, n.tx, audit),
      domains: createPgDomainsRepo(n.pool, n.tx, audit),
      sessions: createPgSessionsRepo(n.pool, n.tx),
      auditLog: createPgAuditRepo(n.pool),
      async close() {
        await n.close();
        await drop();
      },
    };
  };
}

const audited = (action: string) => ({
  actor: { type: 'cli' as const, os_user: 'root' },
  atMs: Date.parse(AT),
  entry: { project_id: 'p1', action, target_type: 'x', target_id: 'x', before: null, after: null },
});

describe.each([['sqlite' as const], ['postgres' as const]])('the %s store', (kind) => {
  let s: Awaited<ReturnType<ReturnType<typeof storeOf>>>;
  beforeAll(async () => {
    s = await storeOf(kind)();
  });
  afterAll(() => s?.close());

  it('keeps the nodes that said they run, and forgets one that stopped', async () => {
    const row = (id: string, seen: string): NodeRow => ({
      id,
      hostname: 'mta',
      pid: 7,
      version: '0.1.0',
      started_at: AT,
      seen_at: seen,
      relay_sessions: 0,
    });
    await s.nodes.save(row('b', '2026-11-26T12:00:05.000Z'));
    await s.nodes.save(row('a', '2026-11-26T12:00:00.000Z'));
    await s.nodes.save({ ...row('b', '2026-11-26T12:00:10.000Z'), relay_sessions: 3 });
    expect((await s.nodes.fresh('2026-11-26T12:00:01.000Z')).map((r) => [r.id, r.relay_sessions])).toEqual([['b', 3]]);
    await s.nodes.remove('b');
    expect((await s.nodes.fresh(AT)).map((r) => r.id)).toEqual(['a']);
  });

  it('makes a secret once and gives the same one after', async () => {
    const first = await s.secrets.get('tracking');
    expect(first).toHaveLength(32);
    expect(await s.query("SELECT value FROM server_secrets WHERE name = 'tracking'")).toEqual([{ value: first }]);
  });

  it('records the server settings, and reads them back', async () => {
    expect(await s.settings.stored()).toEqual({});
    await s.settings.record(
      {
        hostname: 'mta.example.com',
        dnsServers: ['127.0.0.1:53'],
        allowInsecureWebhooks: true,
        mxPort: 2525,
        relayHost: 'smarthost.example.net',
      },
      AT,
    );
    expect(await s.settings.stored()).toMatchObject({
      allowInsecureWebhooks: true,
      relayHost: 'smarthost.example.net',
    });
    const direct = { hostname: 'mta.example.com', dnsServers: [], allowInsecureWebhooks: false, mxPort: 25 };
    await s.settings.record({ ...direct, relayHost: null }, AT);
    expect(await s.settings.stored()).toEqual({ ...direct, relayHost: null });
  });

  it('counts events by hour and by day, and tracking adds to them', async () => {
    await s.event('v1', 'delivered', '2026-11-26T10:15:00.000Z');
    await s.event('v2', 'delivered', '2026-11-26T11:15:00.000Z');
    await s.event('v3', 'sending', '2026-11-26T11:16:00.000Z');
    expect(
      await s.tracking.addEvent({
        id: 'v4',
        emailId: 'e1',
        type: 'opened',
        data: {},
        ip: null,
        userAgent: null,
        at: '2026-11-26T11:20:00.000Z',
      }),
    ).toBe(true);
    expect(
      await s.tracking.addEvent({
        id: 'v5',
        emailId: 'gone',
        type: 'opened',
        data: {},
        ip: null,
        userAgent: null,
        at: AT,
      }),
    ).toBe(false);
    const sort = (r: { bucket: string; type: string; n: number }[]) =>
      [...r].sort((x, y) => (x.bucket + x.type < y.bucket + y.type ? -1 : 1));
    expect(sort(await s.stats.countByBucket('p1', 'hour', '2026-11-26T00', '2026-11-27T00'))).toEqual([
      { bucket: '2026-11-26T10', type: 'delivered', n: 1 },
      { bucket: '2026-11-26T11', type: 'delivered', n: 1 },
      { bucket: '2026-11-26T11', type: 'opened', n: 1 },
    ]);
    expect(sort(await s.stats.countByBucket('p1', 'day', '2026-11-26T00', '2026-11-27T00'))).toEqual([
      { bucket: '2026-11-26', type: 'delivered', n: 2 },
      { bucket: '2026-11-26', type: 'opened', n: 1 },
    ]);
  });

  it('pages the suppression list in byte order, with the last reason given, and audits each change', async () => {
    await s.suppressions.addMany(
      'p1',
      [
        { email: 'b@example.com', reason: 'MANUAL' },
        { email: 'Z@example.com'.toLowerCase(), reason: 'MANUAL' },
        { email: '_x@example.com', reason: 'COMPLAINT' },
        { email: 'b@example.com', reason: 'HARD_BOUNCE' },
      ],
      AT,
      audited('suppression.add'),
    );
    const page1 = await s.suppressions.listPage('p1', '', 2);
    expect(page1.map((r) => [r.email, r.reason])).toEqual([
      ['_x@example.com', 'COMPLAINT'],
      ['b@example.com', 'HARD_BOUNCE'],
    ]);
    expect((await s.suppressions.listPage('p1', page1[1]!.email, 2)).map((r) => r.email)).toEqual(['z@example.com']);
    expect(await s.suppressions.remove('p1', 'b@example.com', audited('suppression.remove'))).toBe(true);
    expect(await s.suppressions.remove('p1', 'b@example.com', audited('suppression.remove'))).toBe(false);
    expect(await s.suppressions.find('p1', 'b@example.com')).toBeUndefined();
    expect(
      (await s.query("SELECT action FROM audit_logs WHERE action LIKE 'suppression.%' ORDER BY action")).map(
        (r) => (r as { action: string }).action,
      ),
    ).toEqual(['suppression.add', 'suppression.remove']);
  });

  it('stores templates, updates them only over the version read, and lists them by slug', async () => {
    const t = {
      id: 't1',
      project_id: 'p1',
      name: 'Welcome',
      slug: 'welcome',
      subject_template: 'Hi {{ name }}',
      html_template: null,
      text_template: 'Hello',
      variables: { name: 'there' },
      version: 1,
      published_version: 1,
      is_layout: false,
      layout_id: null,
      created_at: AT,
      updated_at: AT,
    };
    await s.templates.create(t, audited('template.create'));
    await s.templates.create({ ...t, id: 't2', slug: 'Alpha' }, audited('template.create'));
    expect(await s.templates.update({ ...t, name: 'Welcome 2' }, audited('template.update'), true)).toBe(true);
    expect(await s.templates.update({ ...t, name: 'stale' }, audited('template.update'), true)).toBe(false);
    expect(await s.templates.findBySlug('p1', 'welcome')).toMatchObject({
      name: 'Welcome 2',
      version: 2,
      variables: { name: 'there' },
    });
    expect((await s.templates.list('p1')).map((x) => x.slug)).toEqual(['Alpha', 'welcome']);
    expect(await s.templates.remove('t2', audited('template.remove'))).toBe('deleted');
    expect(await s.templates.findById('t2')).toBeUndefined();
  });

  it('keeps accounts: users by any case of their address, organizations with one OWNER at least, projects, invitations', async () => {
    const acc = s.accounts;
    await acc.createUser({ id: 'u2', email: 'Ada@Example.com', password_hash: 'h', created_at: AT });
    expect(await acc.findUserByEmail('ada@example.COM')).toMatchObject({ id: 'u2', email: 'Ada@Example.com' });
    await acc.createOrgWithOwner({ id: 'o2', name: 'Two', plan: 'PAID', created_at: AT }, 'u2', audited('org.create'));
    expect((await acc.listOrgsOfUser('u2')).map((o) => [o.id, o.role])).toEqual([['o2', 'OWNER']]);
    expect(await acc.countOrgs()).toBe(2);
    await acc.createProject(
      { id: 'p2', organization_id: 'o2', name: 'Web', created_at: AT },
      audited('project.create'),
    );
    const dup = await acc
      .createProject({ id: 'p3', organization_id: 'o2', name: 'Web', created_at: AT }, audited('project.create'))
      .catch((e: unknown) => e);
    expect(isUniqueViolation(dup)).toBe(true);
    await acc.updateProject('p2', { settingsPatch: '{"click_tracking":true}' }, audited('project.update'));
    await acc.updateProject(
      'p2',
      { name: 'Site', settingsPatch: '{"open_tracking":false}' },
      audited('project.update'),
    );
    const p2 = (await acc.findProjectById('p2'))!;
    expect([p2.name, JSON.parse(p2.settings)]).toEqual(['Site', { click_tracking: true, open_tracking: false }]);
    await expect(acc.setMemberRole('o2', 'u2', 'ADMIN', audited('member.update'))).rejects.toMatchObject({
      code: 'conflict',
    });
    await acc.addMember('o2', 'u1', 'DEVELOPER', AT, audited('member.add'));
    await acc.setMemberRole('o2', 'u1', 'OWNER', audited('member.update'));
    await acc.setMemberRole('o2', 'u2', 'VIEWER', audited('member.update'));
    expect((await acc.listMembers('o2')).map((m) => [m.email, m.role]).sort()).toEqual([
      ['Ada@Example.com', 'VIEWER'],
      ['owner@example.com', 'OWNER'],
    ]);
    await expect(acc.removeMember('o2', 'u1', audited('member.remove'))).rejects.toMatchObject({ code: 'conflict' });
    const invitation = {
      id: 'i1',
      organization_id: 'o2',
      email: 'New@Example.com',
      role: 'ADMIN' as const,
      token_hash: 'th',
      invited_by: 'u1',
      created_at: AT,
      expires_at: '2026-12-03T12:00:00.000Z',
    };
    await acc.createInvitation(invitation, audited('invitation.create'));
    const found = (await acc.findInvitationByHash('th'))!;
    expect(found).toMatchObject({ email: 'New@Example.com', accepted_at: null });
    await acc.createUser({ id: 'u3', email: 'new@example.com', password_hash: 'h', created_at: AT });
    await acc.acceptInvitation(found, 'u3', AT, audited('invitation.accept'));
    await expect(acc.acceptInvitation(found, 'u3', AT, audited('invitation.accept'))).rejects.toMatchObject({
      code: 'conflict',
    });
    expect((await acc.findMember('o2', 'u3'))?.role).toBe('ADMIN');
    await acc.deleteOrg('o2', audited('org.delete'));
    expect(await acc.findProjectById('p2')).toBeUndefined();
    expect(await acc.listOrgsOfUser('u2')).toEqual([]);
  });

  it('keeps sending domains: a ceiling per organization, names in any case, bindings, checks counted in place', async () => {
    const d = s.domains;
    const row = (id: string, name: string) => ({
      id,
      organization_id: 'o1',
      name,
      dkim_selector: 'svc1',
      dkim_private_key: 'k',
      dkim_public_key: 'p',
      created_at: AT,
    });
    expect(await d.createDomain(row('d1', 'example.com'), 1, 'p1', audited('domain.create'))).toBe(true);
    expect(await d.createDomain(row('d2', 'example.org'), 1, undefined, audited('domain.create'))).toBe(false);
    const taken = await d
      .createDomain(row('d3', 'example.com'), 1, undefined, audited('domain.create'))
      .catch((e: unknown) => e);
    expect(isUniqueViolation(taken)).toBe(true);
    expect(await d.findDomainByName('Example.COM')).toMatchObject({ id: 'd1', name: 'example.com', status: 'PENDING' });
    expect(await d.isVerifiedForProject('p1', 'EXAMPLE.com')).toBe(false);
    const verify = (r: { failing_checks: number }) => ({
      status: 'VERIFIED' as const,
      verified_at: AT,
      failing_since: null,
      failing_checks: r.failing_checks + 1,
      warning: null,
    });
    expect((await d.recordCheck('d1', AT, '[]', verify))?.after).toMatchObject({
      status: 'VERIFIED',
      failing_checks: 1,
    });
    await d.recordCheck('d1', AT, '[{"ok":true}]', verify);
    expect(await d.findDomainById('d1')).toMatchObject({
      failing_checks: 2,
      checks: '[{"ok":true}]',
      last_checked_at: AT,
    });
    expect(await d.isVerifiedForProject('p1', 'EXAMPLE.com')).toBe(true);
    expect(await d.recordCheck('gone', AT, '[]', verify)).toBeUndefined();
    expect(await d.bindProject('d1', 'p1', AT, audited('domain.bind'))).toBe(false);
    expect(await d.listProjectIds('d1')).toEqual(['p1']);
    expect(await d.unbindProject('d1', 'p1', audited('domain.unbind'))).toBe(true);
    expect(await d.isVerifiedForProject('p1', 'example.com')).toBe(false);
    expect((await d.listDomains('o1')).map((r) => r.id)).toEqual(['d1']);
    expect(await d.deleteDomain('d1', audited('domain.delete'))).toBe(true);
    expect(await d.listDomainIds()).toEqual([]);
  });

  it('rotates a refresh token once: presented twice at once, one rotation wins and the other revokes the family', async () => {
    const ss = s.sessions;
    const later = '2026-11-27T12:00:00.000Z';
    await ss.startFamily('f1', 'u1', AT, [
      { token_hash: 'a1', kind: 'access', expires_at: later },
      { token_hash: 'r1', kind: 'refresh', expires_at: later },
    ]);
    expect(await ss.findToken('a1')).toMatchObject({ user_id: 'u1', family_id: 'f1', family_revoked_at: null });
    const next = (n: string) => [{ token_hash: n, kind: 'refresh' as const, expires_at: later }];
    const both = await Promise.all([ss.rotate('r1', AT, next('r2')), ss.rotate('r1', AT, next('r3'))]);
    // Which of the two wins is the database's choice: one rotates, the other is a reuse.
    expect([...both].sort((a, b) => Number(b.ok) - Number(a.ok))).toEqual([
      { ok: true, user_id: 'u1', family_id: 'f1' },
      { ok: false, reason: 'reused' },
    ]);
    const issued = both[0].ok ? 'r2' : 'r3';
    expect(await ss.findToken(issued)).toMatchObject({ family_revoked_at: AT });
    expect(await ss.rotate(issued, AT, next('r4'))).toEqual({ ok: false, reason: 'revoked' });
    expect(await ss.rotate('nope', AT, [])).toEqual({ ok: false, reason: 'unknown' });
    await ss.startFamily('f2', 'u1', AT, [{ token_hash: 'r9', kind: 'refresh', expires_at: AT }]);
    expect(await ss.rotate('r9', later, [])).toEqual({ ok: false, reason: 'expired' });
    await ss.purgeExpired(later);
    expect(await ss.findToken('r9')).toBeUndefined();
    expect(await s.query("SELECT id FROM session_families WHERE id = 'f2'")).toEqual([]);
  });

  it('reads the audit log newest first in the order it was written, page by page', async () => {
    // Written in one millisecond, one after the other: ids alone would not tell their order.
    for (const n of [1, 2, 3, 4, 5]) {
      await s.suppressions.addMany('p1', [], AT, {
        ...audited(`order.${n}`),
        entry: { ...audited('x').entry, organization_id: 'o9', action: `order.${n}` },
      });
    }
    const first = await s.auditLog.list('o9', undefined, 2);
    expect(first.map((r) => r.action)).toEqual(['order.5', 'order.4']);
    expect((await s.auditLog.list('o9', first[1]!.id, 2)).map((r) => r.action)).toEqual(['order.3', 'order.2']);
    const all: string[] = [];
    for await (const r of s.auditLog.iterate('o9', 2)) all.push(r.action);
    expect(all).toEqual(['order.5', 'order.4', 'order.3', 'order.2', 'order.1']);
    expect(first[0]).toMatchObject({ organization_id: 'o9', actor: { type: 'cli', name: 'root' }, before: null });
  });

  it('keeps the rule that decided a bounce, a retry and a late bounce, on the recipient and the email (issue 29)', async () => {
    const now = Date.parse(AT);
    await s.exec(`INSERT INTO emails (id, project_id, env, status, from_email, to_emails, subject, created_at)
        VALUES ('e2', 'p1', 'LIVE', 'QUEUED', 'a@x.test', '[]', 's', '${AT}');
      INSERT INTO recipients (email_seq, project_id, address, address_lc, domain, kind, status, next_attempt_at, updated_at)
        SELECT seq, 'p1', a, a, 'x.test', 'to', st, CASE WHEN st = 'QUEUED' THEN '${AT}' END, '${AT}'
        FROM emails, (SELECT 'dead@x.test' AS a, 'QUEUED' AS st UNION ALL SELECT 'grey@x.test', 'QUEUED'
                      UNION ALL SELECT 'late@x.test', 'DELIVERED') r
        WHERE id = 'e2'`);
    const rows = (await s.delivery.findDue(now, 10)).filter((r) => r.address !== 'late@x.test');
    const claimed = await s.delivery.claim(rows, now, 60_000, new Map());
    const policy = { schedule: [60_000], maxAgeMs: 3_600_000 };
    const decision = (address: string, code: number, text: string) =>
      decide(
        { recipient: address, stage: 'rcpt', reply: { code, enhanced: null, text }, failure: null },
        1,
        now,
        now,
        policy,
      );
    const outcomes = [
      { address: 'dead@x.test', decision: decision('dead@x.test', 550, '5.1.1 Rejected') },
      { address: 'grey@x.test', decision: decision('grey@x.test', 451, '4.7.1 Greylisted, try again later') },
    ].map((o) => ({
      ...o,
      recipient_id: claimed.find((r) => r.address === o.address)!.id,
      attempts: 1,
      detail: '',
      delay_notified: 0,
      waited_ms: 0,
    }));
    const seq = claimed[0]!.email_seq;
    expect(await s.delivery.record(seq, 'p1', 'e2', null, outcomes, now, claimed[0]!.lease)).toBe(2);
    const late = await s.delivery.findRecipient(seq, 'late@x.test');
    const dsn = decision('late@x.test', 550, '5.1.1 User unknown');
    if (dsn.kind !== 'bounced') throw new Error(`a dead address is a bounce, not ${dsn.kind}`);
    const ref = { seq, projectId: 'p1', emailId: 'e2', recipientId: late!.id, address: 'late@x.test' };
    expect(await s.delivery.recordLateBounce(ref, dsn, 'dsn', now)).toBe(true);
    const line = (d: Decision) => ('rule' in d ? describeRule(d.rule) : null);
    expect([...outcomes.map((o) => line(o.decision)), line(dsn)]).toEqual(Array(3).fill(expect.any(String)));
    expect(
      await s.query(`SELECT r.address, r.status, r.bounce_rule FROM recipients r JOIN emails e ON e.seq = r.email_seq
        WHERE e.id = 'e2' ORDER BY r.id`),
    ).toEqual([
      { address: 'dead@x.test', status: 'BOUNCED', bounce_rule: line(outcomes[0]!.decision) },
      { address: 'grey@x.test', status: 'QUEUED', bounce_rule: line(outcomes[1]!.decision) },
      { address: 'late@x.test', status: 'BOUNCED', bounce_rule: line(dsn) },
    ]);
    expect(await s.query("SELECT bounce_rule FROM emails WHERE id = 'e2'")).toEqual([
      { bounce_rule: line(outcomes[0]!.decision) },
    ]);
  });
});
