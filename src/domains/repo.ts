import type { Port } from '../store/port.ts';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type { DomainState, DomainStatus } from './status.ts';
import type { DkimKeyRow, KeyPlan } from './dkim-keys.ts';

export interface DomainRow extends DomainState {
  id: string;
  organization_id: string;
  name: string;
  status: DomainStatus;
  /** Null only for rows made without a key (tests that insert domains directly). */
  dkim_selector: string | null;
  /** PKCS#8 PEM. */
  dkim_private_key: string | null;
  /** Base64 SPKI DER: the p= tag of the DKIM record. */
  dkim_public_key: string | null;
  created_at: string;
  /** JSON array of RecordCheck; null before the first check. */
  checks: string | null;
  last_checked_at: string | null;
}

export type NewDomainRow = Pick<
  DomainRow,
  'id' | 'organization_id' | 'name' | 'dkim_selector' | 'dkim_private_key' | 'dkim_public_key' | 'created_at'
>;

/**
 * What a change of a domain's DKIM keys writes, planned (dkim-keys.ts) from the rows as
 * they are inside the transaction: rows to insert or update by id, the active RSA key the
 * domain's dkim_* columns follow, and the audit rows of its steps.
 */
export type KeyWrite = KeyPlan & { audits: Audited[] };

/** Plans a KeyWrite from the domain's stored key rows and the domain row, inside the transaction. */
export type PlanKeys = (keys: DkimKeyRow[], row: DomainRow) => KeyWrite;

/** SQL of sending domains and their project bindings: reads run at once, writes inside a group transaction. */
export function createDomainsRepo(db: Db, tx: Committer, audit: AuditWriter) {
  const log = (a: Audited | undefined) => a && audit.record(a.actor, a.entry, a.atMs);
  const q = {
    bound: db.prepare<[string, string], { status: string }>(
      `SELECT d.status FROM domains d JOIN project_domains pd ON pd.domain_id = d.id
       WHERE pd.project_id = +? AND d.name = +?`,
    ),
    byId: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE id = ?'),
    byName: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE name = ?'),
    ofOrg: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE organization_id = ? ORDER BY created_at, id'),
    allIds: db.prepare<[], { id: string }>('SELECT id FROM domains ORDER BY created_at, id'),
    countOrg: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM domains WHERE organization_id = ?'),
    projects: db.prepare<[string], { project_id: string }>(
      'SELECT project_id FROM project_domains WHERE domain_id = ? ORDER BY created_at, project_id',
    ),
    keys: db.prepare<[string], DkimKeyRow>(
      'SELECT * FROM domain_dkim_keys WHERE domain_id = ? ORDER BY created_at, id',
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
    /** True when `domain` is VERIFIED and bound to the project. */
    isVerifiedForProject: (projectId: string, domain: string) =>
      read(q.bound.get(projectId, domain.toLowerCase())?.status === 'VERIFIED'),
    findDomainById: (id: string) => read(q.byId.get(id)),
    findDomainByName: (name: string) => read(q.byName.get(name)),
    listDomains: (orgId: string) => read(q.ofOrg.all(orgId)),
    listDomainIds: () => read(q.allIds.all().map((r) => r.id)),
    listProjectIds: (domainId: string) => read(q.projects.all(domainId).map((r) => r.project_id)),
    /** The domain's stored DKIM keys, oldest first (none for a domain stored before them: dkim-keys.ts keysOf). */
    listDkimKeys: (domainId: string) => read(q.keys.all(domainId)),
    /**
     * Inserts the domain (and binds it to `projectId` when given) unless the
     * organization already has `max` domains; false at the ceiling. Counting
     * inside the write makes the ceiling hold under concurrent adds.
     */
    createDomain: (
      row: NewDomainRow,
      max: number | null,
      projectId: string | undefined,
      a: Audited,
      keys: DkimKeyRow[] = [],
      /** The audit rows of the keys' steps beside the domain's own (an Ed25519 key waiting for its record). */
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
    /** Binds; false when it already was (nothing written, nothing audited). */
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
    /**
     * Writes what `plan` makes of the domain's keys as they are inside the transaction (a
     * rotation, Ed25519 on or off); undefined when the domain is gone. An error `plan`
     * throws (a rotation under way) writes nothing.
     */
    updateDkimKeys: (domainId: string, plan: PlanKeys) =>
      tx.write(() => {
        const row = q.byId.get(domainId);
        if (!row) return undefined;
        const k = plan(q.keys.all(domainId), row);
        writeKeys(domainId, k);
        return k;
      }),
    /**
     * Stores a check and the state `next` computes from the row as it is inside
     * the transaction, so a CLI verify and the server's periodic check cannot
     * overwrite each other's count; `keys` plans what the check changes of the DKIM keys
     * (a new key seen, an old one retired) in the same transaction. Undefined when the
     * domain is gone.
     */
    recordCheck: (
      id: string,
      at: string,
      checks: string,
      next: (row: DomainRow) => DomainState,
      audited?: (before: DomainRow, after: DomainRow) => Audited,
      keys?: PlanKeys,
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
        return { before: row, after, keys: k };
      }),
  };
}

/** The domains repository behind the store seam (SQLite here, PostgreSQL in repo-pg.ts). */
export type DomainsRepo = Port<ReturnType<typeof createDomainsRepo>>;
