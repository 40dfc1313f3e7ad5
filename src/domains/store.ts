// The domains store: what the domains domain asks of a database, whichever runs. repo.ts
// (SQLite) and repo-pg.ts (PostgreSQL) implement it; test/contract/domains.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { Notice } from '../events/index.ts';
import type { DkimKeyRow, KeyPlan } from './dkim-keys.ts';
import type { DomainState, DomainStatus } from './status.ts';

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
  /** 1 when the domain receives mail for its routes (issue 34); 0 by default. Absent on a row made by hand in a test. */
  receiving?: number;
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

/** What recordCheck wrote: the row before and after the check, and the keys' write if any. */
export interface RecordedCheck {
  before: DomainRow;
  after: DomainRow;
  keys: KeyWrite | undefined;
}

export interface DomainsStore {
  /** True when `domain` (any case) is VERIFIED and bound to the project. Reads only. */
  isVerifiedForProject(projectId: string, domain: string): Promise<boolean>;
  /** The domain with this id, undefined when none. */
  findDomainById(id: string): Promise<DomainRow | undefined>;
  /** The domain with this name (compared without case: a name is unique on the server), undefined when none. */
  findDomainByName(name: string): Promise<DomainRow | undefined>;
  /**
   * The domain with this name (as findDomainByName) with its stored DKIM keys (as listDkimKeys),
   * in one read: delivery signs every message with them.
   */
  findDomainWithKeys(name: string): Promise<{ row: DomainRow; keys: DkimKeyRow[] } | undefined>;
  /** The organization's domains, oldest first (then by id in byte order). */
  listDomains(orgId: string): Promise<DomainRow[]>;
  /** Every domain's id on the server, oldest first (the periodic checks walk them). */
  listDomainIds(): Promise<string[]>;
  /** The ids of the projects the domain is bound to, in the order they were bound. */
  listProjectIds(domainId: string): Promise<string[]>;
  /** The domain's stored DKIM keys, oldest first (none for a domain stored before them: dkim-keys.ts keysOf). */
  listDkimKeys(domainId: string): Promise<DkimKeyRow[]>;
  /**
   * Inserts the domain with its `keys` (and binds it to `projectId` when given), with the audit
   * row `a` and `keyAudits` (the keys' steps: an Ed25519 key waiting for its record), in one
   * transaction; true. False, nothing written, when the organization already has `max`
   * domains (null: no ceiling), counted inside the write so that the ceiling holds under
   * concurrent adds, on any node. A name already taken on the server is a conflict before it
   * is a ceiling: the insert's UNIQUE error rejects (the service maps it to 409), nothing written.
   */
  createDomain(
    row: NewDomainRow,
    max: number | null,
    projectId: string | undefined,
    a: Audited,
    keys?: DkimKeyRow[],
    keyAudits?: Audited[],
  ): Promise<boolean>;
  /** Binds the domain to the project with the audit row `a`; false when it already was (nothing written, nothing audited). */
  bindProject(domainId: string, projectId: string, at: string, a: Audited): Promise<boolean>;
  /** Unbinds the domain from the project with the audit row `a`; false when it was not bound (nothing written, nothing audited). */
  unbindProject(domainId: string, projectId: string, a: Audited): Promise<boolean>;
  /**
   * Deletes the domain (its keys and project bindings go with it) with the audit row `a`;
   * false when there was none (nothing audited).
   */
  deleteDomain(id: string, a: Audited): Promise<boolean>;
  /**
   * Writes what `plan` makes of the domain's keys as they are inside the transaction (a
   * rotation, Ed25519 on or off): the key rows saved (inserted, or their state and times
   * updated), the domain's dkim_* columns following the active RSA key, the plan's audit rows;
   * returns the plan. The domain is read and written in one transaction (its row locked on
   * PostgreSQL), so two rotations at once plan from the same keys once. Undefined when the
   * domain is gone; an error `plan` throws (a rotation under way) rejects and writes nothing.
   */
  updateDkimKeys(domainId: string, plan: PlanKeys): Promise<KeyWrite | undefined>;
  /**
   * Stores a check (`checks` JSON, `last_checked_at` = `at`) and the state `next` computes from
   * the row as it is inside the transaction, so a CLI verify and any node's periodic check
   * cannot overwrite each other's count; `keys` plans what the check changes of the DKIM keys
   * (a new key seen, an old one retired), written as updateDkimKeys does, the audit row
   * `audited` makes of the row before and after, and the resource event `notice` makes of them
   * (queued for the webhooks of the projects the domain is bound to that name its type), all
   * in the same transaction. Returns the row
   * before and after (as now stored) and the keys' write; undefined when the domain is gone.
   */
  recordCheck(
    id: string,
    at: string,
    checks: string,
    next: (row: DomainRow) => DomainState,
    audited?: (before: DomainRow, after: DomainRow) => Audited,
    keys?: PlanKeys,
    notice?: (before: DomainRow, after: DomainRow) => Notice | undefined,
  ): Promise<RecordedCheck | undefined>;
}
