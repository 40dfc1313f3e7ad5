import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type { DkimKeyRow } from './dkim-keys.ts';
import type { DomainState } from './status.ts';
import { createNoticeWriter } from '../events/index.ts';
import type { Notice } from '../events/index.ts';
import type { DomainRow, DomainsStore, KeyWrite, NewDomainRow, PlanKeys } from './store.ts';

/** The domains store on SQLite (store.ts): sending domains, their DKIM keys and project bindings. Reads run at once, writes inside a group transaction. */
export function createDomainsRepo(db: Db, tx: Committer, audit: AuditWriter): DomainsStore {
  const notices = createNoticeWriter(db);
  const log = (a: Audited | undefined) => a && audit.record(a.actor, a.entry, a.atMs);
  const q = {
    bound: db.prepare<[string, string], { status: string }>(
      `SELECT d.status FROM domains d JOIN project_domains pd ON pd.domain_id = d.id
       WHERE pd.project_id = +? AND d.name = +?`,
    ),
    byId: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE id = ?'),
    byName: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE name = ?'),
    ofOrg: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE organization_id = +? ORDER BY created_at, id'),
    allIds: db.prepare<[], { id: string }>('SELECT id FROM domains ORDER BY created_at, id'),
    countOrg: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM domains WHERE organization_id = ?'),
    projects: db.prepare<[string], { project_id: string }>(
      'SELECT project_id FROM project_domains WHERE domain_id = +? ORDER BY created_at, project_id',
    ),
    // `+?`: domain_dkim_keys has a partial index, and SQLite re-prepares a read it plans fully
    // (not a unique lookup) whenever a value is bound (test/sqlite-prepared-once.test.ts).
    keys: db.prepare<[string], DkimKeyRow>(
      'SELECT * FROM domain_dkim_keys WHERE domain_id = +? ORDER BY created_at, id',
    ),
  };
  const w = {
    insert: db.prepare(
      `INSERT INTO domains (id, organization_id, name, dkim_selector, dkim_private_key, dkim_public_key, created_at)
       VALUES (@id, @organization_id, @name, @dkim_selector, @dkim_private_key, @dkim_public_key, @created_at)`,
    ),
    bind: db.prepare('INSERT OR IGNORE INTO project_domains (project_id, domain_id, created_at) VALUES (?, ?, ?)'),
    unbind: db.prepare('DELETE FROM project_domains WHERE project_id = ? AND domain_id = ?'),
    remove: db.prepare('DELETE FROM domains WHERE id = ?'),
    saveKey: db.prepare(
      `INSERT INTO domain_dkim_keys
         (id, domain_id, selector, algorithm, private_key, public_key, state, created_at, activated_at, retire_after)
       VALUES (@id, @domain_id, @selector, @algorithm, @private_key, @public_key, @state, @created_at, @activated_at,
         @retire_after)
       ON CONFLICT (id) DO UPDATE SET
         state = excluded.state, activated_at = excluded.activated_at, retire_after = excluded.retire_after`,
    ),
    activeRsa: db.prepare(
      'UPDATE domains SET dkim_selector = ?, dkim_private_key = ?, dkim_public_key = ? WHERE id = ?',
    ),
    check: db.prepare(
      `UPDATE domains SET status = @status, verified_at = @verified_at, failing_since = @failing_since,
         failing_checks = @failing_checks, warning = @warning, checks = @checks, last_checked_at = @at
       WHERE id = @id`,
    ),
  };
  const read = <T>(v: T) => Promise.resolve(v);
  const writeKeys = (domainId: string, k: KeyWrite) => {
    for (const row of k.save) w.saveKey.run(row);
    if (k.activeRsa) w.activeRsa.run(k.activeRsa.selector, k.activeRsa.private_key, k.activeRsa.public_key, domainId);
    for (const a of k.audits) log(a);
  };
  return {
    isVerifiedForProject: (projectId: string, domain: string) =>
      read(q.bound.get(projectId, domain.toLowerCase())?.status === 'VERIFIED'),
    findDomainById: (id: string) => read(q.byId.get(id)),
    findDomainByName: (name: string) => read(q.byName.get(name)),
    findDomainWithKeys: (name: string) => {
      const row = q.byName.get(name);
      return read(row && { row, keys: q.keys.all(row.id) });
    },
    listDomains: (orgId: string) => read(q.ofOrg.all(orgId)),
    listDomainIds: () => read(q.allIds.all().map((r) => r.id)),
    listProjectIds: (domainId: string) => read(q.projects.all(domainId).map((r) => r.project_id)),
    listDkimKeys: (domainId: string) => read(q.keys.all(domainId)),
    createDomain: (
      row: NewDomainRow,
      max: number | null,
      projectId: string | undefined,
      a: Audited,
      keys: DkimKeyRow[] = [],
      keyAudits: Audited[] = [],
    ) =>
      tx.write(() => {
        // A name taken is a conflict before it is a ceiling: the insert's UNIQUE error says so.
        const taken = q.byName.get(row.name) !== undefined;
        if (!taken && max !== null && q.countOrg.get(row.organization_id)!.n >= max) return false;
        w.insert.run(row);
        for (const key of keys) w.saveKey.run(key);
        if (projectId) w.bind.run(projectId, row.id, row.created_at);
        log(a);
        for (const k of keyAudits) log(k);
        return true;
      }),
    bindProject: (domainId: string, projectId: string, at: string, a: Audited) =>
      tx.write(() => {
        const changed = w.bind.run(projectId, domainId, at).changes > 0;
        if (changed) log(a);
        return changed;
      }),
    unbindProject: (domainId: string, projectId: string, a: Audited) =>
      tx.write(() => {
        const changed = w.unbind.run(projectId, domainId).changes > 0;
        if (changed) log(a);
        return changed;
      }),
    deleteDomain: (id: string, a: Audited) =>
      tx.write(() => {
        const changed = w.remove.run(id).changes > 0;
        if (changed) log(a);
        return changed;
      }),
    updateDkimKeys: (domainId: string, plan: PlanKeys) =>
      tx.write(() => {
        const row = q.byId.get(domainId);
        if (!row) return undefined;
        const k = plan(q.keys.all(domainId), row);
        writeKeys(domainId, k);
        return k;
      }),
    recordCheck: (
      id: string,
      at: string,
      checks: string,
      next: (row: DomainRow) => DomainState,
      audited?: (before: DomainRow, after: DomainRow) => Audited,
      keys?: PlanKeys,
      notice?: (before: DomainRow, after: DomainRow) => Notice | undefined,
    ) =>
      tx.write(() => {
        const row = q.byId.get(id);
        if (!row) return undefined;
        const state = next(row);
        w.check.run({ ...state, checks, at, id });
        const k = keys?.(q.keys.all(id), row);
        if (k) writeKeys(id, k);
        const mirrored = k?.activeRsa && {
          dkim_selector: k.activeRsa.selector,
          dkim_private_key: k.activeRsa.private_key,
          dkim_public_key: k.activeRsa.public_key,
        };
        const after = { ...row, ...mirrored, ...state, checks, last_checked_at: at };
        log(audited?.(row, after));
        const n = notice?.(row, after);
        if (n)
          notices.write(
            notices.subscribers(
              q.projects.all(id).map((p) => p.project_id),
              n.type,
            ),
            n,
          );
        return { before: row, after, keys: k };
      }),
  };
}
